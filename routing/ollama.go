package routing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcp-router/mcp-router/internal/bodylimit"
	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/internal/ollamaerr"
	"github.com/mcp-router/mcp-router/routing/internal/vec"
)

// MaxOllamaReplyBytes bounds an Ollama reply read by the default client:
// a batch of embeddings is a few MiB at most.
const MaxOllamaReplyBytes = 32 << 20

// ollamaBatchSize is the most texts sent in one request.
const ollamaBatchSize = 32

// OllamaOptions configures an [OllamaEmbedder]. URL and Model are
// required; every other zero field takes the default documented on it.
type OllamaOptions struct {
	URL     string        // the Ollama server's base URL (with a path prefix, if any)
	Model   string        // the embedding model as Ollama names it ("nomic-embed-text")
	Timeout time.Duration // bounds each request (loading the model included); default 10s
	// KeepAlive is how long Ollama keeps the model loaded after a request:
	// 0 leaves it to the server, negative keeps it until Ollama stops.
	KeepAlive time.Duration
	// HTTPClient sends the requests; nil means a client on
	// http.DefaultTransport whose replies fail past MaxOllamaReplyBytes.
	HTTPClient *http.Client
}

// OllamaEmbedder is an [Embedder] backed by an Ollama server's /api/embed,
// sending batches one at a time, texts truncated to the model's context.
// It is safe for concurrent use.
type OllamaEmbedder struct {
	opts      OllamaOptions // defaults applied
	client    *api.Client
	keepAlive *api.Duration // nil = the server's default
}

var _ Embedder = (*OllamaEmbedder)(nil)

// NewOllamaEmbedder returns an embedder for the server and model in opts.
// It does no I/O: an unreachable server shows up on the first Embed.
func NewOllamaEmbedder(opts OllamaOptions) (*OllamaEmbedder, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("ollama URL: want http:// or https:// with a host and port")
	}
	if opts.Model == "" {
		return nil, errors.New("ollama embedding model: empty")
	}
	defaults.Set(&opts.Timeout, 10*time.Second)
	e := &OllamaEmbedder{opts: opts}
	if opts.KeepAlive != 0 {
		e.keepAlive = &api.Duration{Duration: opts.KeepAlive}
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = bodylimit.Client(MaxOllamaReplyBytes)
	}
	e.client = api.NewClient(u, hc)
	return e, nil
}

// Embed returns one unit vector per text, in order; each batch has its
// own Timeout. Errors name the model and a short reason, never the URL.
// Batches of different lengths are the caller's to catch (checkVectors).
func (e *OllamaEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += ollamaBatchSize {
		batch := texts[start:min(start+ollamaBatchSize, len(texts))]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("ollama embed with model %q: %w", e.opts.Model, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one request and checks and normalises its vectors.
func (e *OllamaEmbedder) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	rctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	truncate := true
	resp, err := e.client.Embed(rctx, &api.EmbedRequest{
		Model:     e.opts.Model,
		Input:     batch,
		Truncate:  &truncate,
		KeepAlive: e.keepAlive,
	})
	if err != nil {
		return nil, ollamaerr.Reason(ctx, err, e.opts.Timeout)
	}
	if len(resp.Embeddings) != len(batch) {
		return nil, fmt.Errorf("got %d vectors for %d texts", len(resp.Embeddings), len(batch))
	}
	dims := len(resp.Embeddings[0])
	for _, v := range resp.Embeddings {
		if len(v) == 0 || len(v) != dims {
			return nil, fmt.Errorf("vectors of %d and %d dimensions in one answer", dims, len(v))
		}
		vec.Unit(v)
	}
	return resp.Embeddings, nil
}
