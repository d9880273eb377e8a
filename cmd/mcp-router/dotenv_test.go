package main

import (
	"strings"
	"testing"
)

// DEBUG_WIRE_LOG is read from a .env beside the profile file, else from
// the working directory's, and the real environment wins over both.
func TestWireLogFromDotEnv(t *testing.T) {
	for _, tc := range []struct {
		name               string
		beside, workingDir string // the .env files' contents; "" for none
		vars               map[string]string
		want               bool
	}{
		{name: "beside the profile", beside: "DEBUG_WIRE_LOG=true\n", want: true},
		{name: "in the working directory", workingDir: "# trace\nexport DEBUG_WIRE_LOG=\"TRUE\"\n", want: true},
		{name: "beside the profile wins over the working directory", beside: "DEBUG_WIRE_LOG=false\n", workingDir: "DEBUG_WIRE_LOG=true\n"},
		{name: "the environment wins", beside: "DEBUG_WIRE_LOG=true\n", vars: map[string]string{"DEBUG_WIRE_LOG": "false"}},
		{name: "other variables are not read", beside: "MCP_ROUTER_LOG_LEVEL=debug\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			profDir, wd := t.TempDir(), t.TempDir()
			cfg := writeFile(t, profDir, "p.yaml", calcProfile)
			if tc.beside != "" {
				writeFile(t, profDir, ".env", tc.beside)
			}
			if tc.workingDir != "" {
				writeFile(t, wd, ".env", tc.workingDir)
			}
			t.Chdir(wd)
			_, stderr, err := runCLI(t, tc.vars, "route", "add", "two", "numbers", "--config", cfg, "--log-level", "error")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(stderr, "routing decision"); got != tc.want {
				t.Errorf("trace logged %v, want %v; stderr:\n%s", got, tc.want, stderr)
			}
		})
	}
}
