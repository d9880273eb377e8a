package routing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/routing/internal/vec"
	"go.uber.org/goleak"
)

// checkLeaks fails t if goroutines started during the test outlive it.
// Call it first: cleanups run last-registered first, so it runs after the
// test's servers are closed. Tests that use it must not be parallel.
func semLeakCheck(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// newOllama starts a fake Ollama server with fopts and returns it with an
// embedder for it configured by eopts (URL, HTTPClient and a default model
// filled in). The server closes when the test ends.
func newOllama(t *testing.T, fopts fakeollama.Options, eopts OllamaOptions) (*fakeollama.Server, *OllamaEmbedder) {
	t.Helper()
	srv := fakeollama.New(fopts)
	t.Cleanup(srv.Close)
	eopts.URL, eopts.HTTPClient = srv.URL(), srv.Client()
	if eopts.Model == "" {
		eopts.Model = "nomic-embed-text"
	}
	e, err := NewOllamaEmbedder(eopts)
	if err != nil {
		t.Fatal(err)
	}
	return srv, e
}

func TestOllamaEmbedderBatches(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{Models: []string{"nomic-embed-text"}}, OllamaOptions{})
	texts := make([]string, 50)
	for i := range texts {
		texts[i] = fmt.Sprintf("tool number %d reads file %d", i, i*7)
	}
	vecs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.EmbedCalls(); got != 2 {
		t.Errorf("requests: got %d, want 2 (batches of 32 and 18)", got)
	}
	if got := srv.EmbeddedTexts(); got != 50 {
		t.Errorf("texts embedded: got %d, want 50", got)
	}
	if len(vecs) != 50 {
		t.Fatalf("got %d vectors, want 50", len(vecs))
	}
	for i, v := range vecs {
		if got := vec.Dot(v, fakeollama.Embed(texts[i], 256)); math.Abs(got-1) > 1e-5 {
			t.Fatalf("vector %d: cosine with its text's embedding %v, want 1 (order kept)", i, got)
		}
	}
}

func TestOllamaEmbedderBatchSize(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	if _, err := e.Embed(t.Context(), make([]string, 2*ollamaBatchSize+1)); err != nil {
		t.Fatal(err)
	}
	if got := srv.EmbedCalls(); got != 3 {
		t.Errorf("requests for %d texts in batches of %d: got %d, want 3", 2*ollamaBatchSize+1, ollamaBatchSize, got)
	}
}

func TestOllamaEmbedderNoTextsNoRequest(t *testing.T) {
	semLeakCheck(t)
	srv, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	vecs, err := e.Embed(t.Context(), nil)
	if err != nil || len(vecs) != 0 || srv.EmbedCalls() != 0 {
		t.Errorf("got %v, %v after %d requests; want nothing, nil, 0", vecs, err, srv.EmbedCalls())
	}
}

// TestOllamaEmbedderRequest checks the wire request: model, a list input,
// truncation on, keep_alive only when set.
func TestOllamaEmbedderRequest(t *testing.T) {
	semLeakCheck(t)
	bodies := make(chan map[string]any, 3)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Error(err)
		}
		bodies <- body
		fmt.Fprint(w, `{"model":"m","embeddings":[[3,4]]}`)
	}))
	defer ts.Close()
	for _, keep := range []time.Duration{0, -1, 30 * time.Minute} {
		e, err := NewOllamaEmbedder(OllamaOptions{URL: ts.URL, Model: "m", KeepAlive: keep, HTTPClient: ts.Client()})
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := e.Embed(t.Context(), []string{"x"})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(vecs[0][0])-0.6) > 1e-6 {
			t.Errorf("got %v, want the vector normalised to [0.6 0.8]", vecs[0])
		}
	}
	want := []string{
		`{"input":["x"],"model":"m","options":null,"truncate":true}`,
		`{"input":["x"],"keep_alive":-1,"model":"m","options":null,"truncate":true}`,
		`{"input":["x"],"keep_alive":"30m0s","model":"m","options":null,"truncate":true}`,
	}
	for i := range want {
		got, _ := json.Marshal(<-bodies)
		if string(got) != want[i] {
			t.Errorf("request %d: got %s, want %s", i, got, want[i])
		}
	}
}

func TestOllamaEmbedderErrors(t *testing.T) {
	semLeakCheck(t)
	bad := func(body string, status int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}))
	}
	closed := fakeollama.New(fakeollama.Options{})
	closed.Close()
	for _, tc := range []struct {
		name string
		srv  func() (url string, hc *http.Client, stop func())
		want string
	}{
		{"unknown model", func() (string, *http.Client, func()) {
			s := fakeollama.New(fakeollama.Options{Models: []string{"other"}})
			return s.URL(), s.Client(), s.Close
		}, `ollama embed with model "m": status 404: model "m" not found, try pulling it first`},
		{"unreachable", func() (string, *http.Client, func()) {
			return closed.URL(), http.DefaultClient, func() {}
		}, `ollama embed with model "m": server unreachable: `},
		{"wrong count", func() (string, *http.Client, func()) {
			s := bad(`{"model":"m","embeddings":[[1,0]]}`, 200)
			return s.URL, s.Client(), s.Close
		}, `ollama embed with model "m": got 1 vectors for 2 texts`},
		{"ragged", func() (string, *http.Client, func()) {
			s := bad(`{"model":"m","embeddings":[[1,0],[1]]}`, 200)
			return s.URL, s.Client(), s.Close
		}, `ollama embed with model "m": vectors of 2 and 1 dimensions in one answer`},
		{"long html error", func() (string, *http.Client, func()) {
			s := bad("<html>"+strings.Repeat("bad gateway ", 500)+"</html>", 502)
			return s.URL, s.Client(), s.Close
		}, `ollama embed with model "m": status 502: <html>bad gateway bad gateway`},
		{"not json", func() (string, *http.Client, func()) {
			s := bad(`hello`, 200)
			return s.URL, s.Client(), s.Close
		}, `ollama embed with model "m": invalid character`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, hc, stop := tc.srv()
			defer stop()
			e, err := NewOllamaEmbedder(OllamaOptions{URL: u, Model: "m", HTTPClient: hc})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(t.Context(), []string{"a", "b"})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error starting %q", err, tc.want)
			}
			host := strings.TrimPrefix(u, "http://")
			if strings.Contains(err.Error(), host) || len(err.Error()) > 300 {
				t.Errorf("error %q names the server or is too long", err)
			}
		})
	}
}

func TestOllamaEmbedderTimeout(t *testing.T) {
	semLeakCheck(t)
	_, e := newOllama(t, fakeollama.Options{Delay: time.Hour}, OllamaOptions{Timeout: 50 * time.Millisecond})
	start := time.Now()
	_, err := e.Embed(t.Context(), []string{"a"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Errorf("got %v, want a timeout after 50ms", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Embed returned after %v, want about 50ms", d)
	}
}

func TestOllamaEmbedderCallerCancel(t *testing.T) {
	semLeakCheck(t)
	_, e := newOllama(t, fakeollama.Options{}, OllamaOptions{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestNewOllamaEmbedderRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts OllamaOptions
	}{
		{"no URL", OllamaOptions{Model: "m"}},
		{"no scheme", OllamaOptions{URL: "ollama:1234", Model: "m"}},
		{"no host", OllamaOptions{URL: "http://", Model: "m"}},
		{"bad scheme", OllamaOptions{URL: "ftp://h:1", Model: "m"}},
		{"no model", OllamaOptions{URL: "http://h:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewOllamaEmbedder(tc.opts); err == nil {
				t.Error("got nil error, want one")
			}
		})
	}
	if _, err := NewOllamaEmbedder(OllamaOptions{URL: "https://h:1/prefix", Model: "m"}); err != nil {
		t.Errorf("URL with a path prefix: %v", err)
	}
}
