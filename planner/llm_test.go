package planner

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
)

func TestNewOllamaLLMChecksOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts OllamaOptions
		want string
	}{
		{"no URL", OllamaOptions{Model: "m"}, "ollama URL"},
		{"no scheme", OllamaOptions{URL: "localhost:11434", Model: "m"}, "ollama URL"},
		{"no model", OllamaOptions{URL: "http://localhost:11434"}, "model: empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewOllamaLLM(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestOllamaLLMStreamsNothingAndJoinsTheReply(t *testing.T) {
	srv := fakeollama.New(fakeollama.Options{Chat: script(`{"a": "b c d"}`)})
	t.Cleanup(srv.Close)
	llm, err := NewOllamaLLM(OllamaOptions{URL: srv.URL(), Model: "m", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := llm.Chat(t.Context(), "", "hi", json.RawMessage(`{"type":"object"}`))
	if err != nil || got != `{"a": "b c d"}` {
		t.Errorf("got %q, %v; want the whole reply", got, err)
	}
}

func TestOllamaLLMOwnTimeout(t *testing.T) {
	srv := fakeollama.New(fakeollama.Options{Delay: time.Hour})
	t.Cleanup(srv.Close)
	llm, err := NewOllamaLLM(OllamaOptions{URL: srv.URL(), Model: "m", HTTPClient: srv.Client(), Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = llm.Chat(t.Context(), "s", "u", nil)
	if err == nil || !strings.Contains(err.Error(), `ollama chat with model "m": no answer within 50ms`) {
		t.Errorf("got %v, want the request's own timeout", err)
	}
}
