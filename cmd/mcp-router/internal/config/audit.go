package config

import (
	"cmp"

	"github.com/mcp-router/mcp-router/audit"
)

// Audit is the audit section: where the record of each call goes besides the state store.
type Audit struct {
	// File is the JSON-lines file; "" writes none.
	File string
	// MaxBytes is the size past which File rotates [audit.DefaultMaxBytes].
	MaxBytes int64
	// Keep is how many rotated files are kept [audit.DefaultKeep].
	Keep int
}

type rawAudit struct {
	File     string    `yaml:"file"`
	MaxBytes sizeValue `yaml:"max_bytes"`
	Keep     sizeValue `yaml:"keep"`
}

func (c *Config) audit(raw rawAudit) {
	c.Audit = Audit{File: raw.File, MaxBytes: cmp.Or(int64(raw.MaxBytes), audit.DefaultMaxBytes), Keep: cmp.Or(int(raw.Keep), audit.DefaultKeep)}
}
