package config

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/proxy"
)

// limits.start_wait bounds how long a call waits for a starting upstream:
// 10s unless set, a positive Go duration when set.
func TestLimitsStartWait(t *testing.T) {
	const profile = "profiles:\n  default:\n    upstreams:\n      calc: {builtin: calculator}\n"
	cfg, err := load(t, profile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.StartWait != proxy.DefaultStartWait {
		t.Errorf("default start_wait: got %s, want %s", cfg.Limits.StartWait, proxy.DefaultStartWait)
	}
	cfg, err = load(t, "limits: {start_wait: 3s}\n"+profile, nil)
	if err != nil || cfg.Limits.StartWait != 3*time.Second {
		t.Errorf("start_wait: 3s: got %v, %v", cfg.Limits.StartWait, err)
	}
	if _, err := load(t, "limits: {start_wait: soon}\n"+profile, nil); err == nil || !strings.Contains(err.Error(), "start_wait") {
		t.Errorf("start_wait: soon: got %v, want an error naming the key", err)
	}
}
