package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// writeLegacy writes the state files of an earlier version with that
// version's code: two lessons, a pin with a pending change, and one
// model's vectors.
func writeLegacy(t *testing.T, dir string) Legacy {
	t.Helper()
	l := Legacy{LessonsFile: filepath.Join(dir, "lessons.db"), PinsFile: filepath.Join(dir, "pins", "pins.json")}
	bolt, err := lessons.OpenBolt(l.LessonsFile)
	if err != nil {
		t.Fatal(err)
	}
	bolt.Put(t.Context(), lesson("read a file", "fs_read"))
	bolt.Put(t.Context(), lesson("weather in Paris", "weather_get"))
	bolt.Close()
	pins, err := integrity.Open(filepath.Dir(l.PinsFile))
	if err != nil {
		t.Fatal(err)
	}
	tool := mcp.Tool{Name: "search", Description: "Search.", RawInputSchema: json.RawMessage(`{"type":"object"}`)}
	pins.Check("alpha", []mcp.Tool{tool})
	tool.Description = "Search. Changed."
	pins.Check("alpha", []mcp.Tool{tool})
	vecs := routing.FileVectors(filepath.Join(dir, "embeddings"))
	if err := vecs.SaveVectors("m", map[[32]byte][]float32{{1}: {1, 0}, {2}: {0, 1}}); err != nil {
		t.Fatal(err)
	}
	l.VectorFiles, _ = filepath.Glob(filepath.Join(dir, "embeddings", "*", "vectors.bin"))
	return l
}

func TestImportLegacyMovesEverythingOnce(t *testing.T) {
	dir := t.TempDir()
	l := writeLegacy(t, dir)
	db := openDB(t, dir)
	imported, err := db.ImportLegacy(t.Context(), l)
	if err != nil || len(imported) != 3 {
		t.Fatalf("ImportLegacy: %v, %v; want 3 files", imported, err)
	}
	all, _ := db.Lessons().All(t.Context())
	if len(all) != 2 || all[0].ID != 1 || all[1].Tool != "weather_get" {
		t.Errorf("lessons: %+v, want both with their IDs", all)
	}
	pins, _ := integrity.OpenStore(db.Pins())
	if p, ok := pins.Lookup("alpha", "search"); !ok || !p.Pending() || p.PendingExcerpt != "Search. Changed." {
		t.Errorf("pin: %+v, want the pending change kept", p)
	}
	if v, _ := db.Vectors().LoadVectors("m"); len(v) != 2 {
		t.Errorf("vectors: %d, want 2", len(v))
	}
	for _, f := range append([]string{l.LessonsFile, l.PinsFile}, l.VectorFiles...) {
		if _, err := os.Stat(f + MigratedSuffix); err != nil {
			t.Errorf("%s not renamed: %v", f, err)
		}
	}
	// Renamed, the files are not imported again; and a copy put back by
	// hand (a second process that read them at the same time) is skipped.
	if imported, err := db.ImportLegacy(t.Context(), l); err != nil || len(imported) != 0 {
		t.Errorf("second import: %v, %v; want nothing", imported, err)
	}
	os.Rename(l.LessonsFile+MigratedSuffix, l.LessonsFile)
	if imported, err := db.ImportLegacy(t.Context(), l); err != nil || len(imported) != 0 {
		t.Errorf("import of a file imported before: %v, %v; want nothing", imported, err)
	}
	if all, _ := db.Lessons().All(t.Context()); len(all) != 2 {
		t.Errorf("after importing twice: %d lessons, want 2", len(all))
	}
}

func TestImportLegacyKeepsLessonsWhoseIDsAreTaken(t *testing.T) {
	dir := t.TempDir()
	l := writeLegacy(t, dir)
	db := openDB(t, dir)
	db.Lessons().Put(t.Context(), lesson("learned since", "x"))
	if _, err := db.ImportLegacy(t.Context(), Legacy{LessonsFile: l.LessonsFile}); err != nil {
		t.Fatal(err)
	}
	if all, _ := db.Lessons().All(t.Context()); len(all) != 3 {
		t.Errorf("got %d lessons, want the one learned since and both imported", len(all))
	}
}

func TestImportLegacyLeavesAnUnreadableFileAndImportsTheRest(t *testing.T) {
	dir := t.TempDir()
	l := writeLegacy(t, dir)
	os.WriteFile(l.PinsFile, []byte("{not json"), 0o600)
	db := openDB(t, dir)
	imported, err := db.ImportLegacy(t.Context(), l)
	if err == nil || !strings.Contains(err.Error(), l.PinsFile) {
		t.Errorf("got %v, want an error naming %s", err, l.PinsFile)
	}
	if len(imported) != 2 {
		t.Errorf("imported %v, want the lessons and vectors", imported)
	}
	if b, _ := os.ReadFile(l.PinsFile); string(b) != "{not json" {
		t.Error("the unreadable pins.json was moved or changed")
	}
}
