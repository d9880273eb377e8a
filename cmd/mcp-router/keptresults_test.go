package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/proxy/results"
	"github.com/mcp-router/mcp-router/state"
)

// The bounds on kept results, the start wait and the connect limit that
// the file sets reach the hub (unset, the hub's own defaults apply).
func TestKeptResultsBoundsReachTheHub(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf("state_dir: %q\nlimits: {result_store_bytes: 2MiB, result_store_total_bytes: 64MiB, result_ttl: 5m, "+
		"start_wait: 3s, connect_timeout: 90s}\n%s", filepath.Join(dir, "state"), calcProfile))
	mem := state.NewMemory()
	t.Cleanup(func() { mem.Close() })
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) (string, bool) { return "", false },
		configPath: cfg, state: mem}
	c, prof, err := e.loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	opts := e.newGateway(c, prof, parts{}).hubOptions(t.Context(), prof)
	if want := (results.Options{PerPrincipal: 2 << 20, Total: 64 << 20, TTL: 5 * time.Minute}); opts.KeptResults != want {
		t.Errorf("the hub's kept results: got %+v, want %+v", opts.KeptResults, want)
	}
	if opts.StartWait != 3*time.Second || opts.InitTimeout != 90*time.Second {
		t.Errorf("the hub's start wait and connect limit: got %s and %s, want 3s and 90s", opts.StartWait, opts.InitTimeout)
	}
}
