package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The composition root starts what a command asks for, and Close stops it
// last-first: the goroutines it owns end before the hub closes, and the
// audit log closes after the hub, so the hub's last call is on disk.
func TestGatewayClosesWhatItStartedLastFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "audit.jsonl")
	path := writeFile(t, dir, "p.yaml", fmt.Sprintf("state_dir: %q\naudit: {file: %q}\n%s", filepath.Join(dir, "state"), file, calcProfile))
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		getenv: func(string) (string, bool) { return "", false }, configPath: path}
	defer e.closeState()
	g, err := e.startGateway(t.Context(), parts{audit: true, wait: true})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	g.onClose(func() { order = append(order, "after the spawned goroutine") })
	g.spawn(t.Context(), func(ctx context.Context) {
		<-ctx.Done()
		order = append(order, "spawned goroutine stopped")
	})
	if res, err := g.hub.CallTool(t.Context(), "calculator_add", map[string]any{"a": 2, "b": 3}, nil); err != nil || res.IsError {
		t.Fatalf("a call through the gateway's hub: %v %v", res, err)
	}
	g.Close()
	if want := "spawned goroutine stopped,after the spawned goroutine"; strings.Join(order, ",") != want {
		t.Errorf("Close ran %q, want %q: last registered first, each goroutine waited for", order, want)
	}
	if raw, err := os.ReadFile(file); err != nil || !strings.Contains(string(raw), "calculator_add") {
		t.Errorf("audit file after Close: %v %q, want the hub's last call", err, raw)
	}
}
