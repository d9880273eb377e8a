package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A Go program built with cgo off passes; one with a dynamic loader
// (the system's sh) does not.
func TestCheckStatic(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "static")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := CheckStatic(bin); err != nil {
		t.Errorf("a CGO_ENABLED=0 build: %v", err)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	sh, _ = filepath.EvalSymlinks(sh)
	if err := CheckStatic(sh); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("%s: got %v, want dynamically linked", sh, err)
	}
	if err := CheckStatic(src); err == nil {
		t.Error("a Go source file passed as a binary")
	}
}
