package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcp-router/mcp-router/audit"
)

// openAudit opens the audit log of the configuration, the state store's
// and audit.file when set, for the hub Start connects next: serve, call and
// run record their calls alike, the latter two as the principal "local".
// Close writes the records still queued after the hub has closed, so that
// the hub's last calls are recorded.
func (g *gateway) openAudit(ctx context.Context) error {
	cfg := g.cfg
	spool := filepath.Join(cfg.StateDir, fmt.Sprintf("%s%d.jsonl", auditSpoolPrefix, os.Getpid()))
	l, err := audit.Open(audit.Options{File: cfg.Audit.File, MaxBytes: cfg.Audit.MaxBytes, Keep: cfg.Audit.Keep,
		Store: g.state(ctx).Audit(), OnDrop: g.metrics.AuditDropped, Logger: g.log,
		Spool: spool, Adopt: orphanSpools(cfg.StateDir)})
	if err != nil {
		return fmt.Errorf("%s: audit.file: %w", cfg.File, err)
	}
	g.audit = l
	g.onClose(func() {
		if err := l.Close(); err != nil {
			g.log.Warn("writing the last audit records", "file", cfg.Audit.File, "err", err)
		}
	})
	return nil
}

// auditSpoolPrefix names the files in the state directory that keep the
// audit records a gateway's store could not take (one per process, by
// its pid), until the store takes them.
const auditSpoolPrefix = "audit-spool-"

// orphanSpools are the audit spools in dir of processes that have exited,
// claimed for this gateway to write to the store: each is renamed to a
// name of this process first (audit-spool-PID-N.jsonl), so that two
// gateways starting together do not both write it.
func orphanSpools(dir string) []string {
	paths, _ := filepath.Glob(filepath.Join(dir, auditSpoolPrefix+"*.jsonl"))
	var out []string
	for _, p := range paths {
		owner, _, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), auditSpoolPrefix), ".jsonl"), "-")
		pid, err := strconv.Atoi(owner)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		claimed := filepath.Join(dir, fmt.Sprintf("%s%d-%d.jsonl", auditSpoolPrefix, os.Getpid(), len(out)))
		if os.Rename(p, claimed) == nil {
			out = append(out, claimed)
		}
	}
	return out
}
