package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A cold start (npx installing: a child busy on stderr past its connect
// limit, then serving) is given longer, and serve's start report waits
// for it: it says all upstreams connected, never that one was not
// connected "after its first attempt" while that attempt still ran.
func TestServeReportsAColdStartWhenItEnds(t *testing.T) {
	bin := buildBinary(t)
	installer := fmt.Sprintf(`i=0; while [ $i -lt 15 ]; do echo 'npm http fetch GET 200' >&2; sleep 0.2; i=$((i+1)); done; exec %q builtin calculator`, bin)
	cfg := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf(`limits: {connect_timeout: 1s}
profiles:
  default:
    upstreams:
      slow: {command: sh, args: ["-c", %q]}
`, installer))
	_, log := serveStdioInProcess(t, nil, "--config", cfg, "--log-level", "info")
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "all upstreams connected") && !strings.Contains(log.String(), "not connected after") {
		if time.Now().After(deadline) {
			t.Fatalf("no start report in 30s:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := log.String(); !strings.Contains(got, "all upstreams connected") || strings.Contains(got, "not connected after their first attempt") {
		t.Errorf("the start report of a cold start:\n%s", got)
	}
}

// mcp-router tools waits for that cold start too, rather than give up at
// the first connect limit and stop the install under way.
func TestToolsWaitsForAColdStart(t *testing.T) {
	bin := buildBinary(t)
	installer := fmt.Sprintf(`i=0; while [ $i -lt 15 ]; do echo 'npm http fetch GET 200' >&2; sleep 0.2; i=$((i+1)); done; exec %q builtin calculator`, bin)
	cfg := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf(`limits: {connect_timeout: 1s}
profiles:
  default:
    upstreams:
      slow: {command: sh, args: ["-c", %q]}
`, installer))
	out, err := exec.Command(bin, "tools", "--config", cfg, "--log-level", "error").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "slow_add") {
		t.Errorf("tools over a cold start: %v\n%s", err, out)
	}
}

// doctor without --timeout gives a cold start as long as serve would, and
// reports it connected.
func TestDoctorWaitsForAColdStart(t *testing.T) {
	bin := buildBinary(t)
	installer := fmt.Sprintf(`i=0; while [ $i -lt 15 ]; do echo 'npm http fetch GET 200' >&2; sleep 0.2; i=$((i+1)); done; exec %q builtin calculator`, bin)
	cfg := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf(`limits: {connect_timeout: 1s}
profiles:
  default:
    upstreams:
      slow: {command: sh, args: ["-c", %q]}
`, installer))
	out, err := exec.Command(bin, "doctor", "--config", cfg, "--log-level", "error").CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^slow\s+ok\s`).Match(out) {
		t.Errorf("doctor over a cold start: %v\n%s", err, out)
	}
}
