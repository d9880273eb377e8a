package upstream

import (
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcp-router/mcp-router/internal/syncbuf"
)

// Successive runs of one upstream's child: identical output (digits
// aside) is logged once, then counted at 1, 2, 4... repeats; output that
// differs, or stops short, is logged in full.
func TestStderrLogDedupesAcrossRestarts(t *testing.T) {
	var logs syncbuf.Buffer
	s := newStderrLog(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	runs := []string{
		"panic: boom (pid 101)\n  at main.go:12\n",
		"panic: boom (pid 202)\n  at main.go:12\n",
		"panic: boom (pid 303)\r\n  at main.go:12\r\n",
		"panic: boom (pid 404)\n  at main.go:12\n",
		"panic: boom (pid 505)\n  at other.go:7\n",
		"panic: boom (pid 606)\n",
		"",
	}
	for _, r := range runs {
		s.copy(io.NopCloser(strings.NewReader(r)), nil)
	}
	want := []string{
		`msg="upstream stderr" line="panic: boom (pid 101)"`,
		`msg="upstream stderr" line="  at main.go:12"`,
		`msg="upstream stderr: same output as before" lines=2 times=1`,
		`msg="upstream stderr: same output as before" lines=2 times=2`,
		// the fourth run is the third repeat: not logged
		`msg="upstream stderr" line="panic: boom (pid 505)"`,
		`msg="upstream stderr" line="  at other.go:7"`,
		`msg="upstream stderr" line="panic: boom (pid 606)"`,
	}
	got := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// npm's notices from an npx child are logged at DEBUG, its other lines
// at INFO.
func TestStderrLogNpmNoticeAtDebug(t *testing.T) {
	var logs syncbuf.Buffer
	s := newStderrLog(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})))
	cmd := exec.Command("sh", "-c", `printf '%s\n' 'npm notice' 'npm notice New minor version of npm available! 10.8.2 -> 10.9.0' 'server listening' >&2`)
	r, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.copy(r, nil)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`level=DEBUG msg="upstream stderr" line="npm notice"`,
		`level=DEBUG msg="upstream stderr" line="npm notice New minor version of npm available! 10.8.2 -> 10.9.0"`,
		`level=INFO msg="upstream stderr" line="server listening"`,
	}
	got := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
