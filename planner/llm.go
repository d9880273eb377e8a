package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/mcp-router/mcp-router/internal/bodylimit"
	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/internal/ollamaerr"
)

// MaxOllamaReplyBytes bounds an Ollama reply read by the default client:
// a decision is a few KiB.
const MaxOllamaReplyBytes = 4 << 20

// LLM is the chat model that makes decisions. Chat sends one system and one
// user message and returns the whole reply, which must match schema
// (structured output); it must return when ctx ends.
type LLM interface {
	Chat(ctx context.Context, system, user string, schema json.RawMessage) (string, error)
}

// OllamaOptions configures an [OllamaLLM]. URL and Model are required;
// every other zero field takes the default documented on it.
type OllamaOptions struct {
	// URL is the Ollama server's base URL, with a path prefix if any.
	URL string
	// Model is the chat model as Ollama names it, e.g. "qwen3:4b".
	Model string
	// Timeout bounds each request, model loading included; default 60s.
	Timeout time.Duration
	// HTTPClient sends the requests; nil means a client on
	// http.DefaultTransport whose replies fail past MaxOllamaReplyBytes.
	HTTPClient *http.Client
}

// OllamaLLM is an [LLM] on an Ollama server's /api/chat: structured
// output, no streaming, temperature 0. It is safe for concurrent use.
type OllamaLLM struct {
	client  *api.Client
	model   string
	timeout time.Duration
}

var _ LLM = (*OllamaLLM)(nil)

// NewOllamaLLM returns a chat model for the server and model in opts. It
// does no I/O: an unreachable server shows up on the first Chat.
func NewOllamaLLM(opts OllamaOptions) (*OllamaLLM, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("ollama URL: want http:// or https:// with a host and port")
	}
	if opts.Model == "" {
		return nil, errors.New("ollama chat model: empty")
	}
	l := &OllamaLLM{model: opts.Model, timeout: opts.Timeout}
	defaults.Set(&l.timeout, 60*time.Second)
	hc := opts.HTTPClient
	if hc == nil {
		hc = bodylimit.Client(MaxOllamaReplyBytes)
	}
	l.client = api.NewClient(u, hc)
	return l, nil
}

// Chat asks the model once. Errors name the model and a short reason,
// never the server's URL or any header.
func (l *OllamaLLM) Chat(ctx context.Context, system, user string, schema json.RawMessage) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	stream := false
	req := &api.ChatRequest{
		Model:    l.model,
		Messages: messages(system, user),
		Stream:   &stream,
		Format:   schema,
		Options:  map[string]any{"temperature": 0},
	}
	var out strings.Builder
	err := l.client.Chat(rctx, req, func(r api.ChatResponse) error {
		out.WriteString(r.Message.Content)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("ollama chat with model %q: %w", l.model, ollamaerr.Reason(ctx, err, l.timeout))
	}
	return out.String(), nil
}

func messages(system, user string) []api.Message {
	var ms []api.Message
	if system != "" {
		ms = append(ms, api.Message{Role: "system", Content: system})
	}
	return append(ms, api.Message{Role: "user", Content: user})
}
