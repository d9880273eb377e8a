package main

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersionReportsModuleAndRevision(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/mcp-router/mcp-router", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "1efce13a2b4c5d6e7f80"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-11-24T23:01:05Z"}}}
	tests := []struct {
		name, ldflags string
		info          *debug.BuildInfo
		want          string
	}{
		{"module version", "dev", info, "mcp-router v1.4.0 (revision 1efce13a2b4c, modified, 2026-11-24T23:01:05Z; go1.26.8)"},
		{"ldflags win", "1.5.0-rc1", info, "mcp-router 1.5.0-rc1 (revision 1efce13a2b4c, modified, 2026-11-24T23:01:05Z; go1.26.8)"},
		{"source build", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "mcp-router dev (go1.26.8)"},
		{"no build info", "dev", nil, "mcp-router dev"},
	}
	for _, tt := range tests {
		if got := buildVersion(tt.ldflags, tt.info); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The built binary reports the revision the Go toolchain stamped into it,
// as `go version -m` reads it.
func TestVersionCommandMatchesTheBinary(t *testing.T) {
	bin := buildBinary(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(string(out))
	if !strings.HasPrefix(got, "mcp-router ") {
		t.Errorf("version printed %q", got)
	}
	for _, line := range strings.Split(string(meta), "\n") {
		if rev, ok := strings.CutPrefix(strings.TrimSpace(line), "build\tvcs.revision="); ok {
			if !strings.Contains(got, "revision "+rev[:12]) {
				t.Errorf("version printed %q, want revision %s", got, rev[:12])
			}
			return
		}
	}
	t.Logf("the test binary has no VCS stamp (built outside a repository): %q", got)
}

func TestInvalidLogLevelIsAnError(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	_, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "verbose")
	if err == nil || !strings.Contains(err.Error(), "--log-level") || !strings.Contains(err.Error(), "debug, info, warn, error") {
		t.Errorf("got %v, want an error naming --log-level and the valid levels", err)
	}
	_, _, err = runCLI(t, map[string]string{"MCP_ROUTER_LOG_LEVEL": "loud"}, "tools", "--config", cfg)
	if err == nil || !strings.Contains(err.Error(), "MCP_ROUTER_LOG_LEVEL") {
		t.Errorf("got %v, want an error naming MCP_ROUTER_LOG_LEVEL", err)
	}
	if _, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "WARN"); err != nil {
		t.Errorf("--log-level WARN: %v", err)
	}
}

func TestRouteJoinsItsWords(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	out, _, err := runCLI(t, nil, "route", "add", "two", "numbers", "--json", "--config", cfg, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"query": "add two numbers"`) || !strings.Contains(out, `"calculator_add"`) {
		t.Errorf("route printed %s, want the query \"add two numbers\" with calculator_add", out)
	}
}

// version --licenses prints WordNet's licence, with which the word table
// built into the binary must be distributed; plain version does not.
func TestVersionLicensesPrintsWordNetsLicence(t *testing.T) {
	out, _, err := runCLI(t, nil, "version", "--licenses")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"derived from WordNet 3.0", "WordNet 3.0 Copyright 2006 by Princeton University", "PROVIDED \"AS IS\""} {
		if !strings.Contains(out, want) {
			t.Errorf("version --licenses: missing %q in:\n%s", want, out)
		}
	}
	plain, _, err := runCLI(t, nil, "version")
	if err != nil || strings.Contains(plain, "Princeton") {
		t.Errorf("version: %q, %v; want the version line alone", plain, err)
	}
}
