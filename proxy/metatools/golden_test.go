package metatools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

var update = flag.Bool("update", false, "rewrite testdata/definitions.json")

// The definitions of the meta-tools, as tools/list shows them (before the
// gateway adds its search hints), are what the model reads: their names,
// descriptions and schemas change only on purpose. Rewrite the golden
// file with -update, and read its diff.
func TestDefinitionsGolden(t *testing.T) {
	h := newFakeHub()
	tools := New(Options{Catalog: h, Caller: h, Starts: h, Upstreams: h, Router: h.router(), Decisions: h,
		HandleKey: randomKey(t), Planner: &planner.Planner{}, Lessons: &lessons.Memory{}})
	var defs []any
	for _, e := range tools.Shown() {
		defs = append(defs, e.Def)
	}
	got, err := json.MarshalIndent(defs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("testdata", "definitions.json")
	if *update {
		if err := os.WriteFile(file, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("the meta-tools' definitions changed (rerun with -update and read the diff):\n%s", got)
	}
}
