package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// route shows the outage alert request_more_tools gives: a configured
// upstream that failed to start, whose description the query matches,
// comes first as upstream_down, and the tools of other domains that
// stand in for it are scored down.
func TestRouteAlertsAnUpstreamThatIsDown(t *testing.T) {
	bin := buildBinary(t)
	cfg := writeFile(t, t.TempDir(), "p.yaml", `profiles:
  default:
    upstreams:
      calculator: {builtin: calculator}
      weather: {command: sh, args: ["-c", "exit 1"], description: "Weather forecasts and current conditions for any city"}
`)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "route", "weather", "forecast", "for", "a", "number", "--json", "--config", cfg, "--log-level", "error")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// route still exits 1 naming the upstreams not connected, as every
	// command that connects does, after printing its ranking.
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "weather") {
		t.Fatalf("route: %v, want exit 1 naming weather\n%s", err, stderr.String())
	}
	var v routeJSON
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("route --json printed %q: %v", stdout.String(), err)
	}
	if len(v.Alerts) == 0 || v.Alerts[0].Kind != "upstream_down" || !strings.Contains(v.Alerts[0].Message, "server weather") {
		t.Fatalf("alerts %+v, want upstream_down naming server weather first", v.Alerts)
	}
	for _, a := range v.Alerts {
		if a.Kind == "no_match" {
			t.Errorf("alerts %+v keep no_match beside the outage", v.Alerts)
		}
	}
	lowered := false
	for _, tl := range v.Tools {
		if tl.Score > tl.RawScore+1e-9 {
			t.Errorf("%s scored %.3f above its raw %.3f", tl.Name, tl.Score, tl.RawScore)
		}
		lowered = lowered || tl.Score < tl.RawScore
	}
	if !lowered {
		t.Errorf("tools %+v, want the calculator's stand-ins scored down", v.Tools)
	}
}
