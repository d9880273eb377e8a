package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/audit"
	"github.com/mcp-router/mcp-router/internal/printable"
)

func newAuditCmd(e *env) *cobra.Command {
	var (
		since  time.Duration
		f      audit.Filter
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "audit [--since 1h] [--tool T] [--principal P] [--json] [--limit N]",
		Short: "Show the record of tool calls (who called what, how it ended)",
		Long: `Every tool call a gateway makes is recorded in state_dir: time, principal (a bearer
token's fingerprint, or "local"), session, tool, upstream, plan and step, outcome, duration
and the bytes each way. Argument values and results are never recorded. This prints the
newest records, oldest first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since < 0 {
				return fmt.Errorf("--since %s: want a duration, zero or more (like 30m or 24h)", since)
			}
			if f.Limit < 1 || f.Limit > audit.MaxRows { // the state keeps no more
				return fmt.Errorf("--limit %d: want 1 to %d", f.Limit, audit.MaxRows)
			}
			if since > 0 {
				f.Since = time.Now().Add(-since)
			}
			_, _, st, err := e.configState(cmd.Context())
			if err != nil {
				return err
			}
			recs, err := st.Audit().Query(cmd.Context(), f)
			if err != nil {
				return err
			}
			if asJSON {
				if recs == nil {
					recs = []audit.Record{}
				}
				return printJSON(e, recs)
			}
			return printAudit(e.stdout, recs)
		},
	}
	cmd.Flags().DurationVar(&since, "since", 0, "only records this recent (e.g. 1h); 0 is all")
	cmd.Flags().StringVar(&f.Tool, "tool", "", "only calls of this tool")
	cmd.Flags().StringVar(&f.Principal, "principal", "", `only calls of this principal (a token's fingerprint, or "local")`)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&f.Limit, "limit", audit.DefaultLimit, "the most records, the newest")
	return cmd
}

// printAudit prints the records as a table, oldest first.
func printAudit(w io.Writer, recs []audit.Record) error {
	tw := newTable(w, "TIME\tPRINCIPAL\tTOOL\tUPSTREAM\tPLAN/STEP\tOUTCOME\tDURATION\tBYTES IN/OUT")
	for _, r := range recs {
		step := "-"
		if r.Plan != "" {
			step = printable.Line(r.Plan + "/" + r.Step)
		}
		outcome := r.Outcome
		if r.Approval != "" { // how a gated call was let through
			outcome += " (" + r.Approval + ")"
		}
		if r.Approver != "" { // who answered for it in the console
			outcome += " by " + r.Approver
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\n", r.Time.Local().Format(time.DateTime), printable.Line(r.Principal),
			printable.Line(r.Tool), printable.Line(cmp.Or(r.Upstream, "-")), step, printable.Line(outcome), r.Duration.Round(time.Millisecond), r.RequestBytes, r.ResponseBytes)
	}
	return tw.Flush()
}

// openAudit opens the audit log (the state store's, and audit.file when set) for the hub Start
// connects next. Close writes the records still queued after the hub has closed, so that its last
// calls are recorded.
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

// auditSpoolPrefix names the files in the state directory that keep the audit records a gateway's
// store could not take (one per process, by its pid), until the store takes them.
const auditSpoolPrefix = "audit-spool-"

// orphanSpools claims the audit spools in dir of processes that have exited, renaming each to a
// name of this process first so that two gateways starting together do not both write it.
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
