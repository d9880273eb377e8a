package config

import (
	"strings"
	"testing"
	"time"
)

// limits.start_wait bounds how long a call waits for a starting upstream:
// unset it is zero (the proxy's DefaultStartWait, 30s), set a positive Go
// duration.
func TestLimitsStartWait(t *testing.T) {
	const profile = "profiles:\n  default:\n    upstreams:\n      calc: {builtin: calculator}\n"
	cfg, err := load(t, profile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.StartWait != 0 {
		t.Errorf("start_wait unset: got %s, want 0 (proxy.DefaultStartWait)", cfg.Limits.StartWait)
	}
	cfg, err = load(t, "limits: {start_wait: 3s}\n"+profile, nil)
	if err != nil || cfg.Limits.StartWait != 3*time.Second {
		t.Errorf("start_wait: 3s: got %v, %v", cfg.Limits.StartWait, err)
	}
	if _, err := load(t, "limits: {start_wait: soon}\n"+profile, nil); err == nil || !strings.Contains(err.Error(), "start_wait") {
		t.Errorf("start_wait: soon: got %v, want an error naming the key", err)
	}
}

// limits.connect_timeout is the gateway's connect limit (unset it is zero,
// the proxy's DefaultConnectTimeout, 60s);
// an upstream's connect_timeout overrides it for that upstream only.
func TestConnectTimeout(t *testing.T) {
	const profile = "profiles:\n  default:\n    upstreams:\n      calc: {builtin: calculator}\n" +
		"      slow: {command: npx, args: [-y, some-server], connect_timeout: 3m}\n"
	cfg, err := load(t, profile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.ConnectTimeout != 0 {
		t.Errorf("limits.connect_timeout unset: got %s, want 0 (proxy.DefaultConnectTimeout)", cfg.Limits.ConnectTimeout)
	}
	cfg, err = load(t, "limits: {connect_timeout: 90s}\n"+profile, nil)
	if err != nil || cfg.Limits.ConnectTimeout != 90*time.Second {
		t.Fatalf("limits.connect_timeout: 90s: got %v, %v", cfg.Limits.ConnectTimeout, err)
	}
	prof, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Duration{}
	for _, u := range prof.Upstreams {
		got[u.Name] = u.ConnectTimeout
	}
	if got["slow"] != 3*time.Minute || got["calc"] != 0 {
		t.Errorf("connect_timeout by upstream: got %v, want slow 3m and calc unset (the gateway's)", got)
	}
	for _, bad := range []string{"limits: {connect_timeout: soon}\n" + profile,
		strings.Replace(profile, "connect_timeout: 3m", "connect_timeout: -1s", 1)} {
		if _, err := load(t, bad, nil); err == nil || !strings.Contains(err.Error(), "connect_timeout") {
			t.Errorf("a bad connect_timeout: got %v, want an error naming the key", err)
		}
	}
}
