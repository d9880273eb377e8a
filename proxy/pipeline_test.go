package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPipelineOrder prints the stages of a call, and those of a read, in
// their order, first outermost, and holds them to
// testdata/pipeline.golden: a reader sees the pipelines there, and a
// change to them is a change to that file.
func TestPipelineOrder(t *testing.T) {
	h := NewHub(Options{})
	var b strings.Builder
	b.WriteString("tools/call:\n")
	for _, s := range h.stages() {
		b.WriteString(s.name + "\n")
	}
	b.WriteString("upstream\n\nresources/read, prompts/get:\n")
	for _, s := range readStages(h, h.screenResource) {
		b.WriteString(s.name + "\n")
	}
	b.WriteString("upstream\n")
	got := b.String()
	t.Logf("pipelines:\n%s", got)
	path := filepath.Join("testdata", "pipeline.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v (run with -update to write it)", path, err)
	}
	if got != string(want) {
		t.Errorf("the pipeline is\n%s\nwant (%s)\n%s", got, path, want)
	}
}
