// Package fakeollama is an Ollama server for tests. It speaks the parts of
// Ollama's REST API that mcp-router uses (POST /api/embed, POST /api/chat,
// GET /api/tags, GET /api/version, and HEAD / for a heartbeat) in Ollama's
// wire format, so that code under test talks to it through the real
// github.com/ollama/ollama/api client.
//
// Embeddings are deterministic bag-of-words hash vectors (see [Embed]):
// texts that share words have a high cosine, and texts that mean the same
// in other words are no nearer than unrelated ones. A test with the fake
// proves the wiring: the real client, the requests it sends, batching,
// caching, fusion with the lexical scores, and degradation when Ollama is
// slow, failing or gone. It proves nothing about the quality of
// embeddings: a ranking over the fake's vectors is a ranking by shared
// words, and how well a real model ranks is measured only against that
// model. Chat replies come from a script ([Options.Chat]), so a chat test
// proves how replies are handled, not what a model would answer. Tests can
// add latency, make embeddings fail, and count requests.
package fakeollama

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"
)

// Options configures a [Server]. The zero value serves every model name,
// answers at once and echoes chat messages.
type Options struct {
	// Models are the models the server has, as "name" or "name:tag" (no
	// tag means ":latest", as in Ollama). A request for another model fails
	// with 404 and Ollama's "not found, try pulling it first" error. Empty
	// means every model name is served and /api/tags lists none.
	Models []string
	// Delay holds each /api/embed and /api/chat request this long before
	// answering it, or until the client gives up or the server closes.
	Delay time.Duration
	// FailEmbed makes /api/embed answer 500 with an Ollama-style error
	// body. [Server.SetFailEmbed] changes it while the server runs.
	FailEmbed bool
	// Chat scripts /api/chat: it returns the assistant's whole reply to req.
	// An error is answered as Ollama answers errors, with the status of an
	// [*HTTPError] or else 500. Nil echoes the last user message.
	Chat func(req ChatRequest) (string, error)
}

// Dims is the length of each embedding (a request may ask for fewer), and
// Version what /api/version reports.
const (
	Dims    = 256
	Version = "0.17.4"
)

// ChatRequest is the body of POST /api/chat (Stream nil means true).
type ChatRequest = api.ChatRequest

// HTTPError is an error a Chat script returns to choose the status code.
type HTTPError struct {
	Status  int
	Message string
}

func (e *HTTPError) Error() string { return e.Message }

// Server is a running fake Ollama server.
type Server struct {
	opts   Options
	models map[string]bool // normalised names; empty = any
	ts     *httptest.Server
	done   chan struct{} // closed by Close: releases delayed requests
	onWait func()        // for tests: called when a request starts its delay

	closeOnce  sync.Once
	held       atomic.Pointer[chan struct{}] // set by Hold: embeds wait for it to close
	failEmbed  atomic.Bool
	embedCalls atomic.Int64
	embedTexts atomic.Int64
	chatCalls  atomic.Int64
}

// New starts a fake Ollama server on a loopback port. Close it when done.
func New(opts Options) *Server {
	if opts.Chat == nil {
		opts.Chat = echo
	}
	s := &Server{opts: opts, models: map[string]bool{}, done: make(chan struct{})}
	for _, m := range opts.Models {
		s.models[normalizeModel(m)] = true
	}
	s.failEmbed.Store(opts.FailEmbed)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", s.handleEmbed)
	mux.HandleFunc("POST /api/chat", s.handleChat)
	mux.HandleFunc("GET /api/tags", s.handleTags)
	mux.HandleFunc("GET /api/version", s.handleVersion)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "Ollama is running")
	})
	s.ts = httptest.NewServer(mux)
	return s
}

// URL returns the server's base URL.
func (s *Server) URL() string { return s.ts.URL }

// Client returns an HTTP client for the server whose idle connections
// Close shuts, so that tests leak no goroutines.
func (s *Server) Client() *http.Client { return s.ts.Client() }

// Close releases delayed requests, shuts the server down and waits for
// its handlers. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.ts.Close()
	})
}

// Hold makes later /api/embed requests wait until release is called (or
// the client gives up, or the server closes), as a busy Ollama would.
func (s *Server) Hold() (release func()) {
	ch := make(chan struct{})
	s.held.Store(&ch)
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// SetFailEmbed makes later /api/embed requests fail (true) or succeed.
func (s *Server) SetFailEmbed(fail bool) { s.failEmbed.Store(fail) }

// EmbedCalls returns the number of /api/embed requests received, failed
// ones included.
func (s *Server) EmbedCalls() int { return int(s.embedCalls.Load()) }

// EmbeddedTexts returns the number of texts embedded by successful
// /api/embed requests.
func (s *Server) EmbeddedTexts() int { return int(s.embedTexts.Load()) }

// ChatCalls returns the number of /api/chat requests received.
func (s *Server) ChatCalls() int { return int(s.chatCalls.Load()) }

// wait holds a request for Options.Delay and, when held is set, until a
// Hold is released; it reports false when the client left first. When
// the server closes first, it drops the connection, as a stopped Ollama
// would.
func (s *Server) wait(r *http.Request, held bool) bool {
	if s.opts.Delay > 0 {
		if s.onWait != nil {
			s.onWait()
		}
		t := time.NewTimer(s.opts.Delay)
		defer t.Stop()
		if !until(s, r, t.C) {
			return false
		}
	}
	if ch := s.held.Load(); held && ch != nil {
		return until(s, r, *ch)
	}
	return true
}

// until waits for c, or for r's client to leave (false), or for s to
// close.
func until[T any](s *Server, r *http.Request, c <-chan T) bool {
	select {
	case <-c:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		panic(http.ErrAbortHandler) // net/http closes the connection quietly
	}
}

// checkModel writes Ollama's error for a missing or unknown model and
// reports whether the request may go on.
func (s *Server) checkModel(w http.ResponseWriter, model string) bool {
	switch {
	case model == "":
		writeError(w, http.StatusBadRequest, "model is required")
		return false
	case len(s.models) > 0 && !s.models[normalizeModel(model)]:
		writeError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first", model))
		return false
	}
	return true
}

// normalizeModel adds the ":latest" tag to a name without one.
func normalizeModel(name string) string {
	if !strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
		return name + ":latest"
	}
	return name
}

func echo(req ChatRequest) (string, error) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content, nil
		}
	}
	return "", nil
}

// writeJSON writes v as the JSON body of a response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may have gone; nothing to do
}

// writeError writes an error the way Ollama does: {"error": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// errorStatus returns the status for an error from a Chat script.
func errorStatus(err error) int {
	var he *HTTPError
	if errors.As(err, &he) && he.Status >= 400 {
		return he.Status
	}
	return http.StatusInternalServerError
}

func (s *Server) handleVersion(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"version": Version})
}

func (s *Server) handleTags(w http.ResponseWriter, _ *http.Request) {
	models := make([]api.ListModelResponse, 0, len(s.opts.Models))
	for _, m := range s.opts.Models {
		name := normalizeModel(m)
		sum := sha256.Sum256([]byte(name))
		models = append(models, api.ListModelResponse{
			Name: name, Model: name,
			ModifiedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
			Size:       int64(len(name)) << 20,
			Digest:     hex.EncodeToString(sum[:]),
			Details:    api.ModelDetails{Format: "gguf", Family: "fake", Families: []string{"fake"}, ParameterSize: "1M", QuantizationLevel: "F16"},
		})
	}
	writeJSON(w, http.StatusOK, api.ListResponse{Models: models})
}
