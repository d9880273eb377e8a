package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/routing"
)

// semanticRouter routes with embeddings from an Ollama at url.
func semanticRouter(t *testing.T, url string) (*routing.Router, *routing.SemanticIndex) {
	t.Helper()
	emb, err := routing.NewOllamaEmbedder(routing.OllamaOptions{URL: url, Model: "embed-test", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sem := routing.NewSemanticIndex(routing.SemanticOptions{Embedder: emb, Model: "embed-test", Timeout: time.Second})
	return routing.NewRouter(routing.RouterOptions{Semantic: sem}), sem
}

func TestRoutingWithEmbeddings(t *testing.T) {
	fo := fakeollama.New(fakeollama.Options{})
	t.Cleanup(fo.Close)
	r, sem := semanticRouter(t, fo.URL())
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: r})
	eventually(t, 10*time.Second, "every tool embedded in the background", func() bool {
		hits, err := sem.Search(t.Context(), "probe", 1) // fails while an upstream is not embedded
		return err == nil && len(hits) > 0
	})
	before := fo.EmbedCalls()
	d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "sleep for a few milliseconds", "route": "SIMPLE_TOOL"}))
	if len(d.Tools) == 0 || !strings.HasSuffix(d.Tools[0].Name, "_sleep") {
		t.Errorf("routed %+v, want a _sleep tool first", d.Tools)
	}
	if fo.EmbedCalls() <= before {
		t.Error("Ollama saw no embed call for the query")
	}
}

func TestRoutingOllamaDownStaysLexical(t *testing.T) {
	fo := fakeollama.New(fakeollama.Options{})
	url := fo.URL()
	fo.Close() // nothing listens there now
	r, _ := semanticRouter(t, url)
	c := overHTTPWith(t, ServerOptions{Hub: startHub(t, builtinFake("alpha")), Router: r})
	res := c.call(t, "request_more_tools", map[string]any{"query": "sleep for some milliseconds"})
	d := decodeDiscovery(t, res)
	if res.IsError || len(d.Tools) == 0 || d.Tools[0].Name != "alpha_sleep" {
		t.Errorf("with Ollama down: isError %v, tools %+v; want lexical routing to alpha_sleep", res.IsError, d.Tools)
	}
}
