package fakeollama

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newClient starts a server with opts and returns the real Ollama client
// for it; both are closed when the test ends.
func newClient(t *testing.T, opts Options) (*Server, *api.Client) {
	t.Helper()
	s := New(opts)
	t.Cleanup(s.Close)
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	return s, api.NewClient(u, s.Client())
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func TestOllamaEmbedListAndString(t *testing.T) {
	s, c := newClient(t, Options{Models: []string{"nomic-embed-text"}})
	ctx := t.Context()
	texts := []string{"read a file", "get the weather", ""}
	resp, err := c.Embed(ctx, &api.EmbedRequest{Model: "nomic-embed-text", Input: texts})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Model != "nomic-embed-text" {
		t.Errorf("model: got %q, want nomic-embed-text", resp.Model)
	}
	if len(resp.Embeddings) != 3 {
		t.Fatalf("got %d embeddings, want 3", len(resp.Embeddings))
	}
	for i, v := range resp.Embeddings {
		if diff := cmp.Diff(Embed(texts[i], Dims), v); diff != "" {
			t.Errorf("embedding %d differs from Embed (-want +got):\n%s", i, diff)
		}
		if n := math.Sqrt(cosine(v, v)); math.Abs(n-1) > 1e-5 {
			t.Errorf("embedding %d has norm %v, want 1", i, n)
		}
	}
	if resp.PromptEvalCount == 0 || resp.TotalDuration == 0 {
		t.Errorf("got prompt_eval_count %d, total_duration %v; want both set", resp.PromptEvalCount, resp.TotalDuration)
	}

	one, err := c.Embed(ctx, &api.EmbedRequest{Model: "nomic-embed-text:latest", Input: "read a file"})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Embeddings) != 1 {
		t.Fatalf("string input: got %d embeddings, want 1", len(one.Embeddings))
	}
	if got, want := s.EmbedCalls(), 2; got != want {
		t.Errorf("EmbedCalls: got %d, want %d", got, want)
	}
	if got, want := s.EmbeddedTexts(), 4; got != want {
		t.Errorf("EmbeddedTexts: got %d, want %d", got, want)
	}
}

func TestOllamaEmbedDimensions(t *testing.T) {
	_, c := newClient(t, Options{})
	resp, err := c.Embed(t.Context(), &api.EmbedRequest{Model: "m", Input: []string{"x"}, Dimensions: 16})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(resp.Embeddings[0]); got != 16 {
		t.Errorf("got %d dimensions, want 16", got)
	}
}

func TestEmbedSharedWordsAreClose(t *testing.T) {
	q := Embed("read a file from disk", 256)
	file := Embed("read file: Read the contents of a file on disk", 256)
	files := Embed("list files in a directory", 256)
	weather := Embed("get weather: current weather forecast for a city", 256)
	if a, b := cosine(q, file), cosine(q, weather); a <= b+0.3 {
		t.Errorf("cos(query, file tool) = %.3f, cos(query, weather tool) = %.3f; want the first far higher", a, b)
	}
	if a, b := cosine(Embed("file", 256), files), cosine(Embed("file", 256), weather); a <= b {
		t.Errorf("trigrams: cos(file, files...) = %.3f <= cos(file, weather...) = %.3f", a, b)
	}
}

func TestOllamaEmbedUnknownModel(t *testing.T) {
	_, c := newClient(t, Options{Models: []string{"nomic-embed-text"}})
	_, err := c.Embed(t.Context(), &api.EmbedRequest{Model: "x", Input: []string{"a"}})
	var se api.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want an api.StatusError", err)
	}
	if se.StatusCode != http.StatusNotFound || se.ErrorMessage != `model "x" not found, try pulling it first` {
		t.Errorf("got %d %q, want 404 and Ollama's not-found message", se.StatusCode, se.ErrorMessage)
	}
}

func TestOllamaEmbedFailure(t *testing.T) {
	s, c := newClient(t, Options{FailEmbed: true})
	req := &api.EmbedRequest{Model: "m", Input: []string{"a"}}
	_, err := c.Embed(t.Context(), req)
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusInternalServerError {
		t.Fatalf("got %v, want a 500 api.StatusError", err)
	}
	s.SetFailEmbed(false)
	if _, err := c.Embed(t.Context(), req); err != nil {
		t.Fatalf("after SetFailEmbed(false): %v", err)
	}
	if got := s.EmbedCalls(); got != 2 {
		t.Errorf("EmbedCalls: got %d, want 2", got)
	}
	if got := s.EmbeddedTexts(); got != 1 {
		t.Errorf("EmbeddedTexts: got %d, want 1 (failed calls embed nothing)", got)
	}
}

func TestOllamaEmbedDelayHonoursClientDeadline(t *testing.T) {
	_, c := newClient(t, Options{Delay: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Embed(ctx, &api.EmbedRequest{Model: "m", Input: []string{"a"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Embed returned after %v, want about 50ms", d)
	}
}

func TestOllamaCloseReleasesDelayedRequests(t *testing.T) {
	s, c := newClient(t, Options{Delay: time.Hour})
	waiting := make(chan struct{})
	s.onWait = func() { close(waiting) } // set before the only request
	errc := make(chan error, 1)
	go func() {
		_, err := c.Embed(t.Context(), &api.EmbedRequest{Model: "m", Input: []string{"a"}})
		errc <- err
	}()
	<-waiting
	s.Close() // must not wait an hour
	if err := <-errc; err == nil {
		t.Error("got nil error from a request the server dropped, want one")
	}
}

func TestOllamaEmbedBadInput(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"number", `{"model":"m","input":3}`, 400, `{"error":"invalid input type"}`},
		{"mixed list", `{"model":"m","input":["a",1]}`, 400, `{"error":"invalid input type"}`},
		{"no model", `{"input":"a"}`, 400, `{"error":"model is required"}`},
		{"empty", `{"model":"m","input":[]}`, 200, `{"model":"m","embeddings":[],"total_duration":`},
		{"absent", `{"model":"m"}`, 200, `{"model":"m","embeddings":[],"total_duration":`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := s.Client().Post(s.URL()+"/api/embed", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || !strings.HasPrefix(string(body), tc.want) {
				t.Errorf("got %d %s, want %d %s", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
}

func TestOllamaChatStreaming(t *testing.T) {
	var seen ChatRequest
	s, c := newClient(t, Options{Chat: func(req ChatRequest) (string, error) {
		seen = req
		return "the plan is ready", nil
	}})
	var chunks []api.ChatResponse
	req := &api.ChatRequest{
		Model:    "llama3.2",
		Messages: []api.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "plan it"}},
		Format:   json.RawMessage(`"json"`),
		Options:  map[string]any{"temperature": 0},
	}
	err := c.Chat(t.Context(), req, func(r api.ChatResponse) error {
		chunks = append(chunks, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want one per word and a last one", len(chunks))
	}
	var text strings.Builder
	for i, ch := range chunks {
		text.WriteString(ch.Message.Content)
		if ch.Done != (i == len(chunks)-1) {
			t.Errorf("chunk %d: done = %v", i, ch.Done)
		}
		if ch.Message.Role != "assistant" || ch.Model != "llama3.2" || ch.CreatedAt.IsZero() {
			t.Errorf("chunk %d: got role %q model %q created_at %v", i, ch.Message.Role, ch.Model, ch.CreatedAt)
		}
	}
	if got := text.String(); got != "the plan is ready" {
		t.Errorf("streamed text: got %q, want %q", got, "the plan is ready")
	}
	if last := chunks[len(chunks)-1]; last.DoneReason != "stop" || last.TotalDuration == 0 {
		t.Errorf("last chunk: got done_reason %q total_duration %v", last.DoneReason, last.TotalDuration)
	}
	wantMsgs := []api.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "plan it"}}
	if diff := cmp.Diff(wantMsgs, seen.Messages); diff != "" {
		t.Errorf("script saw messages (-want +got):\n%s", diff)
	}
	if string(seen.Format) != `"json"` || seen.Options["temperature"] != float64(0) || seen.Stream != nil {
		t.Errorf("script saw format %s, options %v, stream %v", seen.Format, seen.Options, seen.Stream)
	}
	if s.ChatCalls() != 1 {
		t.Errorf("ChatCalls: got %d, want 1", s.ChatCalls())
	}
}

func TestOllamaChatNotStreaming(t *testing.T) {
	_, c := newClient(t, Options{})
	stream := false
	var chunks []api.ChatResponse
	err := c.Chat(t.Context(), &api.ChatRequest{
		Model:    "llama3.2",
		Messages: []api.Message{{Role: "user", Content: "echo me back"}},
		Stream:   &stream,
	}, func(r api.ChatResponse) error {
		chunks = append(chunks, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 1 {
		t.Fatalf("got %d responses, want 1", len(chunks))
	}
	if got := chunks[0]; got.Message.Content != "echo me back" || !got.Done || got.DoneReason != "stop" {
		t.Errorf("got content %q done %v reason %q, want the echo, done, stop", got.Message.Content, got.Done, got.DoneReason)
	}
}

func TestOllamaChatErrors(t *testing.T) {
	_, c := newClient(t, Options{
		Models: []string{"llama3.2"},
		Chat: func(ChatRequest) (string, error) {
			return "", &HTTPError{Status: http.StatusServiceUnavailable, Message: "server busy"}
		},
	})
	for _, tc := range []struct {
		name, model string
		status      int
		msg         string
	}{
		{"script error", "llama3.2", 503, "server busy"},
		{"unknown model", "qwen", 404, `model "qwen" not found, try pulling it first`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Chat(t.Context(), &api.ChatRequest{
				Model:    tc.model,
				Messages: []api.Message{{Role: "user", Content: "hi"}},
			}, func(api.ChatResponse) error { return nil })
			var se api.StatusError
			if !errors.As(err, &se) || se.StatusCode != tc.status || se.ErrorMessage != tc.msg {
				t.Errorf("got %v, want status %d and %q", err, tc.status, tc.msg)
			}
		})
	}
}

func TestOllamaVersionListHeartbeat(t *testing.T) {
	_, c := newClient(t, Options{Models: []string{"nomic-embed-text", "llama3.2:3b"}})
	ctx := t.Context()
	v, err := c.Version(ctx)
	if err != nil || v != Version {
		t.Errorf("Version: got %q, %v; want %s", v, err, Version)
	}
	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list.Models {
		names = append(names, m.Name)
		if m.Digest == "" || m.Size == 0 || m.Details.Format != "gguf" {
			t.Errorf("model %s: got digest %q size %d format %q", m.Name, m.Digest, m.Size, m.Details.Format)
		}
	}
	if diff := cmp.Diff([]string{"nomic-embed-text:latest", "llama3.2:3b"}, names); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if err := c.Heartbeat(ctx); err != nil {
		t.Errorf("Heartbeat: %v", err)
	}
}

func TestOllamaChatPieces(t *testing.T) {
	for _, s := range []string{"", "one", "two words", " lead", "trail ", "a  b\nc\n\nd"} {
		if got := strings.Join(pieces(s), ""); got != s {
			t.Errorf("pieces(%q) joined: got %q", s, got)
		}
	}
	if got := pieces("a b c"); len(got) != 3 {
		t.Errorf("pieces(a b c): got %q, want 3 pieces", got)
	}
}

func BenchmarkEmbed(b *testing.B) {
	text := "read file: Read the complete contents of a file from the file system. path: path of the file"
	for b.Loop() {
		Embed(text, 256)
	}
}
