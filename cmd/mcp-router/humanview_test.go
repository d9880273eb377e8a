package main

import (
	"strings"
	"testing"
)

// doctor prints a failed server's stderr and error with their control
// characters escaped: a server that writes ANSI escapes (clear the screen,
// recolour, retitle the terminal) and carriage returns to its stderr
// cannot rewrite what doctor shows.
func TestHumanViewEncodingDoctor(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", `profiles:
  default:
    upstreams:
      exits: {command: sh, args: ['-c', 'printf "boom\033[2J\033[32m all upstreams ok\rOK\033]0;owned\007\n" >&2; exit 3']}
`)
	out, _, err := runCLI(t, nil, "doctor", "--timeout", "2s", "--config", cfg, "--log-level", "error")
	if err == nil {
		t.Fatal("doctor of a failing upstream: no error")
	}
	if !strings.Contains(out, "boom") {
		t.Fatalf("doctor does not show the server's stderr:\n%q", out)
	}
	if strings.ContainsAny(out, "\x1b\r\x07") {
		t.Errorf("doctor prints raw control characters:\n%q", out)
	}
	if !strings.Contains(out, `boom\x1b[2J`) {
		t.Errorf("doctor does not show the escape as \\x1b:\n%q", out)
	}
}
