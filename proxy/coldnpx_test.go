package proxy

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A real `npx -y` server started against an empty npm cache joins: its
// install, which a 20 s limit used to cut, runs to the end. Then its
// install folder is left half-installed (a package's files gone, as an
// install cut short leaves it): the next start fails in it, the upstream
// removes the folder once and joins on a clean install. Needs npx and the
// npm registry.
func TestColdNpxServerJoinsAndAHalfInstalledOneIsRepaired(t *testing.T) {
	if testing.Short() {
		t.Skip("installs @modelcontextprotocol/server-memory from the npm registry; skipped with -short")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx not installed")
	}
	cache := t.TempDir()
	// Cwd outside the repository: npx would otherwise run the copy that
	// the tests' npm install put in its node_modules, installing nothing.
	cfg := UpstreamConfig{Name: "memory", Transport: TransportStdio, Command: "npx", Cwd: t.TempDir(),
		Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Prefix: "memory_",
		Env: map[string]string{"npm_config_cache": cache, "MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")}}
	began := time.Now()
	joined(t, cfg, nil)
	t.Logf("a cold npx -y @modelcontextprotocol/server-memory joined in %s", time.Since(began).Round(100*time.Millisecond))

	dirs, err := filepath.Glob(filepath.Join(cache, "_npx", "*", "node_modules", "zod"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("the install's zod folder: %v, %v", dirs, err)
	}
	gut(t, dirs[0])
	// The repaired start is still the first that can succeed: Start, which
	// waits for first attempts (as a call of a starting server does), sees
	// it join, rather than a failure that a retry mends a moment later.
	var logs syncBuffer
	h := newTestHub(t, Options{Upstreams: []UpstreamConfig{cfg}, InitTimeout: DefaultConnectTimeout, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := statusOf(h, "memory"); s.State != StateConnected || s.Restarts < 1 || !strings.Contains(logs.String(), "removed a half-installed npx folder") {
		t.Errorf("after a half-installed start: %s with %d restarts, logs:\n%s\nwant the folder removed, a restart, and connected once the first attempts end", s.State, s.Restarts, logs.String())
	}
}

// joined launches a hub on cfg and waits until it connects.
func joined(t *testing.T, cfg UpstreamConfig, logger *slog.Logger) *Hub {
	t.Helper()
	h := newTestHub(t, Options{Upstreams: []UpstreamConfig{cfg}, InitTimeout: DefaultConnectTimeout, Logger: logger})
	if err := h.Launch(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Minute, cfg.Name+" to connect", func() bool { return statusOf(h, cfg.Name).State == StateConnected })
	h.Close()
	return h
}

// gut removes what dir holds but its package.json.
func gut(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "package.json" {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}
