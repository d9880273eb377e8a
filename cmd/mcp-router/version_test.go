package main

import (
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
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

func TestModuleVersionWithoutLdflags(t *testing.T) {
	tests := []struct {
		name, ldflags string
		info          *debug.BuildInfo
		want          string
	}{
		{"go install @tag", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"VCS build", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261207043557-4f7886a1b2c3+dirty"}}, "v0.0.0-20261207043557-4f7886a1b2c3+dirty"},
		{"ldflags win", "1.5.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "1.5.0"},
		{"no stamp", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no build info", "dev", nil, "dev"},
	}
	for _, tt := range tests {
		if got := moduleVersion(tt.ldflags, tt.info); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A gateway built in a checkout tells its client, in serverInfo, the
// version the Go toolchain stamped into the binary from the VCS (`go
// version -m` reads it), not "dev".
func TestServerInfoReportsTheBinarysVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "mcp-router")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Skipf("no VCS build here (not a git checkout?): %v\n%s", err, out)
	}
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "dev"
	for _, line := range strings.Split(string(meta), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "mod" && f[2] != "(devel)" {
			want = f[2]
		}
	}
	cmd := exec.Command(bin, "serve", "--config", writeFile(t, t.TempDir(), "p.yaml", calcProfile))
	cmd.Env = append(cmd.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "HOME="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	var resp struct {
		Result struct {
			ServerInfo struct{ Name, Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.NewDecoder(stdout).Decode(&resp); err != nil {
		t.Fatal(err)
	}
	if got := resp.Result.ServerInfo.Version; got != want {
		t.Errorf("serverInfo.version %q, want %q (the binary's module version)", got, want)
	}
	if want == "dev" {
		t.Logf("the binary has no module version stamped (built outside a repository)")
	}
}
