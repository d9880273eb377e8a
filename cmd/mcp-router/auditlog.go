package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// openAudit opens the audit log of cfg, the state store's and audit.file
// when set, for the hubs the command starts next: serve, call and run
// record their calls alike, the latter two as the principal "local".
// done writes the records still queued; it is to run after the hub has
// closed, so that the hub's last calls are recorded.
func (e *env) openAudit(ctx context.Context, cfg *config.Config, log *slog.Logger) (done func(), _ error) {
	l, err := audit.Open(audit.Options{File: cfg.Audit.File, MaxBytes: cfg.Audit.MaxBytes, Keep: cfg.Audit.Keep,
		Store: e.runState(ctx, cfg, log).Audit(), OnDrop: e.metrics.AuditDropped, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("%s: audit.file: %w", cfg.File, err)
	}
	e.audit = l
	return func() {
		if err := l.Close(); err != nil {
			log.Warn("writing the last audit records", "file", cfg.Audit.File, "err", err)
		}
	}, nil
}
