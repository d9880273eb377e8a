package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// newLogger returns a tint logger on w at the named level ("" is info; the level is checked by
// checkLogLevel before). Colour only when w is a terminal.
func newLogger(w io.Writer, level string) *slog.Logger {
	lvl, err := parseLevel(level)
	if err != nil {
		lvl = slog.LevelInfo
	}
	return slog.New(tint.NewTextHandler(w, &tint.Options{
		Level:       lvl,
		TimeFormat:  time.TimeOnly,
		NoColor:     !isTerminal(w),
		ReplaceAttr: redactAttr,
	}))
}

// redactAttr passes every string and error attribute through integrity.RedactSecrets: a secret
// known by its shape prints as "[redacted KIND]", whatever package logged it.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	switch v := a.Value.Resolve(); v.Kind() {
	case slog.KindString:
		if r := integrity.RedactSecrets(v.String()); r != v.String() {
			return slog.String(a.Key, r)
		}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			if r := integrity.RedactSecrets(err.Error()); r != err.Error() {
				return slog.String(a.Key, r)
			}
		}
	}
	return a
}

// parseLevel reads one of config.LogLevels ("" is info).
func parseLevel(level string) (slog.Level, error) {
	level = strings.ToLower(level)
	if level == "" {
		return slog.LevelInfo, nil
	}
	if !slices.Contains(config.LogLevels, level) {
		return 0, fmt.Errorf("%q is not one of %s", level, strings.Join(config.LogLevels, ", "))
	}
	var lvl slog.Level
	err := lvl.UnmarshalText([]byte(level))
	return lvl, err
}

// checkLogLevel refuses a --log-level that is not a level, before any command runs (log.level in
// the file is checked when it is loaded).
func (e *env) checkLogLevel() error {
	if _, err := parseLevel(e.logLevel); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ignoreEOF treats the client closing stdin as a clean end.
func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// wireLogger returns log with every level enabled: the routing trace (log.wire) is logged at debug
// level and must show whatever log.level says.
func wireLogger(log *slog.Logger) *slog.Logger {
	return slog.New(allLevels{log.Handler()})
}

// allLevels is a handler that enables every level of the one it wraps.
type allLevels struct{ slog.Handler }

func (allLevels) Enabled(context.Context, slog.Level) bool { return true }

func (h allLevels) WithAttrs(attrs []slog.Attr) slog.Handler {
	return allLevels{h.Handler.WithAttrs(attrs)}
}

func (h allLevels) WithGroup(name string) slog.Handler { return allLevels{h.Handler.WithGroup(name)} }
