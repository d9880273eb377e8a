package state

import (
	"testing"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/routing"
)

// Tool vectors one gateway embedded are read from state.db by the next
// (another process, a restart): only new or changed texts are embedded.
func TestSemanticIndexCachesVectorsInStateDB(t *testing.T) {
	srv := fakeollama.New(fakeollama.Options{})
	defer srv.Close()
	emb, err := routing.NewOllamaEmbedder(routing.OllamaOptions{URL: srv.URL(), HTTPClient: srv.Client(), Model: "nomic-embed-text"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tools := []routing.Tool{
		{Name: "fs_read_file", Description: "Read a file."},
		{Name: "fs_write_file", Description: "Write a file."},
	}
	embedded := func(tools []routing.Tool) int {
		db := openDB(t, dir)
		defer db.Close()
		s := routing.NewSemanticIndex(routing.SemanticOptions{Embedder: emb, Model: "nomic-embed-text", Cache: db.Vectors()})
		before := srv.EmbeddedTexts()
		if err := s.SetUpstream(t.Context(), "fs", tools); err != nil {
			t.Fatal(err)
		}
		return srv.EmbeddedTexts() - before
	}
	if n := embedded(tools); n != 2 {
		t.Errorf("first gateway: embedded %d texts, want 2", n)
	}
	if n := embedded(tools); n != 0 {
		t.Errorf("second gateway: embedded %d texts, want 0 (all from state.db)", n)
	}
	tools[1].Description = "Write text to a file."
	if n := embedded(tools); n != 1 {
		t.Errorf("one description changed: embedded %d texts, want 1", n)
	}
}
