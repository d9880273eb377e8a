package proxy

//lint:file-ignore SA1019 these tests set the log level, which clients of 2025-11-25 still do

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/internal/secrettest"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// echoingErrors answers a tool call whose text argument names a way to
// fail with an error that quotes the credentials the request carried, as
// careless servers do: the bearer token, the query key, the basic
// password, in clear, URL-encoded and base64.
type echoingErrors struct{ next http.Handler }

func (e echoingErrors) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, text, ok := postedCall(w, r)
	if !ok {
		return
	}
	auth := r.Header.Get("Authorization")
	pass, _ := r.URL.User.Password()
	if u, p, ok := r.BasicAuth(); ok && !strings.HasPrefix(auth, "Bearer") {
		pass = u + ":" + p
	}
	echo := fmt.Sprintf("rejected auth=%s key=%s enc=%s b64=%s", auth, r.URL.Query().Get("api_key"),
		url.QueryEscape(r.URL.Query().Get("api_key")), base64.StdEncoding.EncodeToString([]byte(auth+pass)))
	quoted := fmt.Sprintf("%q", echo)
	switch text {
	case "http-500":
		http.Error(w, echo, http.StatusInternalServerError)
	case "rpc-error":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":%s}}`, id, quoted)
	case "is-error":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"isError":true,"content":[{"type":"text","text":%s}],"structuredContent":{"why":%s}}}`,
			id, quoted, quoted)
	default:
		e.next.ServeHTTP(w, r)
	}
}

// TestNoSecretLeavesThroughHTTPErrors: an HTTP upstream whose error
// replies (an HTTP 500 body, a JSON-RPC error, an isError result) quote
// the configured header value and URL query key gives the model and the
// log those texts with the secrets replaced, in every form echoed.
func TestNoSecretLeavesThroughHTTPErrors(t *testing.T) {
	mcpHandler := server.NewStreamableHTTPServer(fakeupstream.New("remote"))
	ts := httptest.NewServer(echoingErrors{next: mcpHandler})
	t.Cleanup(ts.Close)
	t.Cleanup(func() { mcpHandler.Shutdown(context.Background()) })
	logs := &syncBuffer{}
	up := UpstreamConfig{Name: "remote", Transport: TransportStreamableHTTP, Prefix: "remote_",
		URL:     ts.URL + "/mcp?api_key=" + url.QueryEscape(secrettest.Query),
		Headers: map[string]string{"Authorization": "Bearer " + secrettest.Header}}
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{up},
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})

	for _, how := range []string{"http-500", "rpc-error", "is-error"} {
		t.Run(how, func(t *testing.T) {
			res, err := h.CallTool(t.Context(), "remote_echo", map[string]any{"text": how}, nil)
			var seen string
			switch {
			case err != nil:
				seen = err.Error()
			case res != nil && res.IsError:
				b, _ := res.MarshalJSON()
				seen = string(b)
			default:
				t.Fatalf("got %v, %v; want an error", res, err)
			}
			if !strings.Contains(seen, "rejected") || !strings.Contains(seen, upstream.ScrubbedValue) {
				t.Errorf("the error lost its text or kept the secret: %s", seen)
			}
			secrettest.AssertNoLeak(t, "the error", seen, secrettest.Header, secrettest.Query)
		})
	}
	if got := callText(t, h, "remote_echo", map[string]any{"text": "still up"}); got != "still up" {
		t.Errorf("after the errors: %q", got)
	}
	secrettest.AssertNoLeak(t, "the log", logs.String(), secrettest.Header, secrettest.Query)
}

// TestNoSecretLeavesFromAStdioChild: a stdio upstream that prints its
// configured env value (in a result, in an error result, on stderr)
// has it replaced before the model or the log sees it.
func TestNoSecretLeavesFromAStdioChild(t *testing.T) {
	up := stdioFake("kid")
	up.Env["API_TOKEN"] = secrettest.Env
	logs := &syncBuffer{}
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{up},
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	got := callText(t, h, "kid_getenv", map[string]any{"name": "API_TOKEN"})
	if got != upstream.ScrubbedValue {
		t.Errorf("getenv API_TOKEN: got %q, want %q", got, upstream.ScrubbedValue)
	}
	secrettest.AssertNoLeak(t, "the log", logs.String(), secrettest.Env)
}

// TestNoSecretLeavesThroughResourcesAndPrompts: resources/read and
// prompts/get results are screened like tool results: a key of a known
// kind is redacted, a configured secret is replaced, and under the block
// policy the read fails naming what was found.
func TestNoSecretLeavesThroughResourcesAndPrompts(t *testing.T) {
	build := func(string, []string) (*server.MCPServer, error) {
		s := server.NewMCPServer("docs", "1", server.WithResourceCapabilities(false, false),
			server.WithPromptCapabilities(false), server.WithToolCapabilities(false))
		s.AddResource(mcp.NewResource("note://key", "key"), func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "note://key", MIMEType: "text/plain",
				Text: "aws " + sec11AWSKey + " env " + secrettest.Env}}, nil
		})
		s.AddPrompt(mcp.NewPrompt("greet"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("uses "+secrettest.Env, []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("key "+sec11AWSKey))}), nil
		})
		return s, nil
	}
	for _, policy := range []integrity.ResultPolicy{"", integrity.ResultsBlock} {
		t.Run("policy="+string(policy), func(t *testing.T) {
			up := UpstreamConfig{Name: "docs", Transport: TransportBuiltin, Builtin: "docs", Prefix: "docs_",
				Env: map[string]string{"TOKEN": secrettest.Env}, Results: policy}
			h := startHubWith(t, Options{Upstreams: []UpstreamConfig{up}, Builtin: build})
			req := mcp.ReadResourceRequest{}
			req.Params.URI = "note://key"
			res, rerr := h.ReadResource(t.Context(), "docs", req)
			prompt, perr := h.GetPrompt(t.Context(), "docs_greet", nil)
			if policy == integrity.ResultsBlock {
				for what, err := range map[string]error{"read": rerr, "prompt": perr} {
					if err == nil || !strings.Contains(err.Error(), "aws_access_key_id") {
						t.Errorf("%s under block: got %v, want an error naming the kind", what, err)
					}
				}
				return
			}
			if rerr != nil || perr != nil {
				t.Fatalf("read: %v, prompt: %v", rerr, perr)
			}
			text := res.Contents[0].(mcp.TextResourceContents).Text
			if want := "aws " + integrity.Redacted("aws_access_key_id") + " env " + upstream.ScrubbedValue; text != want {
				t.Errorf("resource text: got %q, want %q", text, want)
			}
			b, _ := json.Marshal(prompt)
			secrettest.AssertNoLeak(t, "the prompt", string(b), secrettest.Env, sec11AWSKey)
			if prompt.Description != "uses "+upstream.ScrubbedValue {
				t.Errorf("prompt description: %q", prompt.Description)
			}
		})
	}
}

// TestNoSecretLeavesThroughRelayedLogs: an upstream's log message relayed
// to the client that caused it has the upstream's configured secrets
// replaced.
func TestNoSecretLeavesThroughRelayedLogs(t *testing.T) {
	up := stdioFake("alpha")
	up.Env["LOG_TOKEN"] = "message at warning" // the fake logs this very text
	c := overHTTP(t, startHub(t, up))
	if err := c.session.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	c.call(t, "alpha_log", nil)
	eventually(t, 5*time.Second, "the upstream's warning and error logs", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.logs) >= 2
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	var warned bool
	for _, l := range c.logs {
		b, _ := json.Marshal(l.Data)
		if strings.Contains(string(b), "message at warning") {
			t.Errorf("a relayed log carries the configured secret: %s", b)
		}
		warned = warned || strings.Contains(string(b), upstream.ScrubbedValue)
	}
	if !warned {
		t.Errorf("no relayed log shows the replacement: %+v", c.logs)
	}
}

// listingServer is a server whose tool, resource, template, prompt and
// completions all hold text: its name, then text.
func listingServer(text string) func(string, []string) (*server.MCPServer, error) {
	return func(string, []string) (*server.MCPServer, error) {
		s := server.NewMCPServer("docs", "1", server.WithResourceCapabilities(false, false),
			server.WithPromptCapabilities(false), server.WithToolCapabilities(false), server.WithCompletions(),
			server.WithPromptCompletionProvider(completions{text}))
		s.AddTool(mcp.NewTool("query", mcp.WithDescription("Query "+text),
			mcp.WithString("sql", mcp.Description("SQL run with "+text), mcp.DefaultString(text))),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
		s.AddResource(mcp.NewResource("note://db", "db", mcp.WithResourceDescription("The database at "+text)),
			func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) { return nil, nil })
		s.AddResourceTemplate(mcp.NewResourceTemplate("note://{id}", "notes", mcp.WithTemplateDescription("Notes of "+text)),
			func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) { return nil, nil })
		s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("Greets "+text),
			mcp.WithArgument("who", mcp.ArgumentDescription("Who, for "+text))),
			func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil })
		return s, nil
	}
}

// completions completes every prompt argument with text.
type completions struct{ text string }

func (c completions) CompletePromptArgument(context.Context, string, mcp.CompleteArgument, mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: []string{c.text}}, nil
}

// TestNoSecretInListings (HR2-06): the tools, resources, templates and
// prompts an upstream lists reach the model, so its configured secrets in
// their texts (descriptions, schemas) are replaced, as in its results.
func TestNoSecretInListings(t *testing.T) {
	up := UpstreamConfig{Name: "docs", Transport: TransportBuiltin, Builtin: "docs", Prefix: "docs_",
		Env: map[string]string{"TOKEN": secrettest.Env}}
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{up}, Builtin: listingServer(secrettest.Env)})
	c := h.Catalog()
	if len(c.Tools) != 1 || len(c.Resources) != 1 || len(c.Templates) != 1 || len(c.Prompts) != 1 {
		t.Fatalf("catalog: %d tools, %d resources, %d templates, %d prompts; want one of each",
			len(c.Tools), len(c.Resources), len(c.Templates), len(c.Prompts))
	}
	b, err := json.Marshal([]any{c.Tools, c.Resources, c.Templates, c.Prompts})
	if err != nil {
		t.Fatal(err)
	}
	secrettest.AssertNoLeak(t, "the catalog", string(b), secrettest.Env)
	if got, want := strings.Count(string(b), upstream.ScrubbedValue), 7; got < want {
		t.Errorf("the catalog shows %d replacements, want %d: %s", got, want, b)
	}
	if _, err := h.CallTool(t.Context(), "docs_query", map[string]any{"sql": "select 1"}, nil); err != nil {
		t.Errorf("calling the scrubbed tool: %v", err)
	}
}

// TestNoSecretInCompletions (HR2-06): completion values reach the model
// with the upstream's configured secrets replaced.
func TestNoSecretInCompletions(t *testing.T) {
	up := UpstreamConfig{Name: "docs", Transport: TransportBuiltin, Builtin: "docs", Prefix: "docs_",
		Env: map[string]string{"TOKEN": secrettest.Env}}
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{up}, Builtin: listingServer(secrettest.Env)})
	res, err := h.Complete(t.Context(), mcp.CompleteParams{Ref: mcp.PromptReference{Type: "ref/prompt", Name: "docs_greet"},
		Argument: mcp.CompleteArgument{Name: "who", Value: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Completion.Values; len(got) != 1 || got[0] != upstream.ScrubbedValue {
		t.Errorf("completion values: got %q, want [%q]", got, upstream.ScrubbedValue)
	}
}
