package config

import "github.com/mcp-router/mcp-router/audit"

// Audit is the audit section: where the record of each call goes besides
// the state store.
type Audit struct {
	// File is the JSON-lines file; "" writes none.
	File string
	// MaxBytes is the size past which File rotates [audit.DefaultMaxBytes].
	MaxBytes int64
	// Keep is how many rotated files are kept [audit.DefaultKeep].
	Keep int
}

type rawAudit struct {
	File     string      `yaml:"file"`
	MaxBytes *sizeValue  `yaml:"max_bytes"`
	Keep     *burstValue `yaml:"keep"`
}

func (c *Config) audit(raw rawAudit) {
	c.Audit = Audit{File: raw.File, MaxBytes: audit.DefaultMaxBytes, Keep: audit.DefaultKeep}
	if raw.MaxBytes != nil {
		c.Audit.MaxBytes = int64(*raw.MaxBytes)
	}
	if raw.Keep != nil {
		c.Audit.Keep = raw.Keep.N
	}
}
