package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctor tells an upstream still starting (a chatty installer) from a
// failed one, with the time spent; for a crashed Node server it quotes
// the line with the error, not Node's version at the end of the stack;
// and a start that failed in a half-installed npx folder names that
// folder, which the gateway removes once.
func TestDoctorSaysStartingAndQuotesTheError(t *testing.T) {
	bin := buildBinary(t)
	npx := filepath.Join(t.TempDir(), "cache", "_npx", "15b07286cbcc3329")
	if err := os.MkdirAll(filepath.Join(npx, "node_modules", "zod"), 0o755); err != nil {
		t.Fatal(err)
	}
	node := "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '" + npx + "/node_modules/zod/index.js' imported from " +
		npx + "/node_modules/server/dist/index.js"
	crash := fmt.Sprintf(`printf '%%s\n' 'node:internal/modules/esm/resolve:283' '    throw new ERR_MODULE_NOT_FOUND(' '' %q `+
		`'    at finalizeResolution (node:internal/modules/esm/resolve:283:11)' '}' '' 'Node.js v20.20.2' >&2; exit 1`, node)
	cfg := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf(`profiles:
  default:
    upstreams:
      calculator: {builtin: calculator}
      installing: {command: sh, args: ["-c", "while :; do echo 'npm http fetch GET 200' >&2; sleep 0.2; done"]}
      crashed: {command: sh, args: ["-c", %q]}
`, crash))
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "doctor", "--json", "--timeout", "1s", "--config", cfg, "--log-level", "error")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	got := failedDoctor(t, cmd, &stdout, &stderr)
	if c := got["installing"]; c.OK || !c.Starting || !strings.HasPrefix(c.Error, "starting for ") || !strings.Contains(c.Hint, "--timeout") {
		t.Errorf("installing: %+v, want starting, for how long, a hint to wait longer", c)
	}
	c := got["crashed"]
	if c.OK || len(c.Stderr) == 0 || c.Stderr[0] != node || strings.Contains(strings.Join(c.Stderr, "\n"), "Node.js v20") {
		t.Errorf("crashed: stderr %q, want the error line %q first, without Node's version", c.Stderr, node)
	}
	if !strings.Contains(c.Error, npx) || !strings.Contains(c.Hint, "half-installed") {
		t.Errorf("crashed: %+v, want the npx folder named in the error and a hint", c)
	}
	if _, err := os.Stat(npx); !os.IsNotExist(err) {
		t.Errorf("the half-installed npx folder %s: %v, want it removed", npx, err)
	}
}
