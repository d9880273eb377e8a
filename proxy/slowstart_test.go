package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// slowStarter is a stdio upstream that, like a first `npx -y` run,
// installs for 40 s before it reads its stdin: it appends a line to
// starts at each start, then waits (writing a progress line to stderr
// every 2 s unless silent), then serves as a fake upstream.
func slowStarter(t *testing.T, name string, silent bool) (UpstreamConfig, string) {
	exe, env := fakeupstream.Command(name)
	starts := filepath.Join(t.TempDir(), "starts")
	env["STARTS"] = starts
	wait := `i=0; while [ $i -lt 20 ]; do echo "installing: step $i of 20" >&2; sleep 2; i=$((i+1)); done`
	if silent {
		wait = "sleep 40"
	}
	script := `echo start >> "$STARTS"; ` + wait + `; exec "$0"`
	return UpstreamConfig{Name: name, Transport: TransportStdio, Command: "sh", Args: []string{"-c", script, exe},
		Env: env, Prefix: name + "_"}, starts
}

// An upstream that takes 40 s to answer initialize joins, started once:
// one that writes to stderr as it goes is given longer than its 10 s
// connect_timeout, and a silent one fits the default connect limit.
func TestSlowStarterJoinsStartedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 40 s: a slow starter's install")
	}
	for _, tc := range []struct {
		name    string
		silent  bool
		connect time.Duration
	}{
		{name: "chatty", connect: 10 * time.Second},
		{name: "silent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, starts := slowStarter(t, tc.name, tc.silent)
			cfg.ConnectTimeout = tc.connect
			h := newTestHub(t, Options{Upstreams: []UpstreamConfig{cfg}, InitTimeout: DefaultConnectTimeout})
			if err := h.Launch(t.Context()); err != nil {
				t.Fatal(err)
			}
			eventually(t, 90*time.Second, tc.name+" to connect", func() bool {
				return statusOf(h, tc.name).State == StateConnected
			})
			if got := callText(t, h, tc.name+"_echo", map[string]any{"text": "joined"}); got != "joined" {
				t.Errorf("a call once joined: got %q", got)
			}
			b, err := os.ReadFile(starts)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), "start"); n != 1 {
				t.Errorf("started %d times, want once: it was judged hung while it installed", n)
			}
		})
	}
}
