package upstream

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

// envRelay is the client side of an upstream run without a hub: it
// answers sampling with the prompt it was asked, and records what it saw.
type envRelay struct {
	mu      sync.Mutex
	sampled []string
}

func (r *envRelay) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	text, _ := req.Messages[0].Content.(mcp.TextContent)
	r.mu.Lock()
	r.sampled = append(r.sampled, text.Text)
	r.mu.Unlock()
	return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant,
		Content: mcp.NewTextContent("model says " + text.Text)}, Model: "test"}, nil
}

func (r *envRelay) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return nil, ErrNoCaller
}
func (r *envRelay) Log(context.Context, mcp.LoggingMessageNotification) {}
func (r *envRelay) ResourceUpdated(string, string)                      {}

// listedEvent is one call of Env.listed.
type listedEvent struct {
	u     *Upstream
	first bool
	tools []string
}

// TestUpstreamRunsOnItsEnvAlone runs an upstream (a stdio child) with no
// hub, on an Env filled by hand: what it lists goes through the
// env's vetting, its first and later listings reach the env's listed, its
// progress goes through the env's router and its sampling request to the
// env's relay.
func TestUpstreamRunsOnItsEnvAlone(t *testing.T) {
	listed := make(chan listedEvent, 8)
	relay := &envRelay{}
	progress := &ProgressRouter{}
	env := Env{
		Logger: slog.New(slog.DiscardHandler), Version: "test",
		InitTimeout: 5 * time.Second, BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		RefreshDebounce: 20 * time.Millisecond, ReconnectWait: time.Second, MaxInFlight: 4, MaxQueue: 4,
		Progress: progress,
		Relay:    func() Relay { return relay },
		Vet: func(_ Config, _, _ *slog.Logger, tools []mcp.Tool) ([]mcp.Tool, map[string]string) {
			kept := slices.DeleteFunc(slices.Clone(tools), func(t mcp.Tool) bool { return t.Name == "crash" })
			return kept, map[string]string{"crash": "held by the test's vetting"}
		},
		Listed: func(u *Upstream, first bool) {
			var names []string
			for _, t := range u.Listing().Tools {
				names = append(names, t.Name)
			}
			listed <- listedEvent{u, first, names}
		},
	}
	u := runOn(t, stdioFake("solo"), env)

	first := nextListed(t, listed)
	if first.u != u || !first.first {
		t.Fatalf("first listing: got upstream %p first=%v, want %p first=true", first.u, first.first, u)
	}
	if slices.Contains(first.tools, "crash") || !slices.Contains(first.tools, "echo") {
		t.Fatalf("first listing after vetting: got %v, want echo and no crash", first.tools)
	}
	if got := u.Status().Blocked; got != 1 {
		t.Errorf("blocked tools: got %d, want 1", got)
	}

	var mu sync.Mutex
	var reports []Progress
	token, release := progress.Register("solo", func(p Progress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
	})
	defer release()
	res := callSolo(t, u, "progress", map[string]any{"steps": 3}, token)
	if text := allText(res); text != "done 3 steps" {
		t.Fatalf("progress result: got %q, want %q", text, "done 3 steps")
	}
	mu.Lock()
	n := len(reports)
	mu.Unlock()
	if n != 3 {
		t.Errorf("progress reports through the env's router: got %d, want 3", n)
	}

	res = callSolo(t, u, "sample", map[string]any{"prompt": "hello"}, nil)
	if text, want := allText(res), "sampled: model says hello"; text != want {
		t.Errorf("sampling through the env's relay: got %q, want %q", text, want)
	}

	callSolo(t, u, "add_tool", map[string]any{"name": "late"}, nil)
	later := nextListed(t, listed)
	if later.first || !slices.Contains(later.tools, "late") {
		t.Errorf("listing after list_changed: got first=%v tools %v, want first=false with late", later.first, later.tools)
	}
}

// nextListed waits for the next call of the env's listed.
func nextListed(t *testing.T, listed <-chan listedEvent) listedEvent {
	t.Helper()
	select {
	case e := <-listed:
		return e
	case <-time.After(30 * time.Second): // a guard against a hang, not a measure of speed
		t.Fatal("the upstream never reported a listing")
		return listedEvent{}
	}
}

// callSolo calls tool on u as the hub does, on behalf of a client call.
func callSolo(t *testing.T, u *Upstream, tool string, args map[string]any, token mcp.ProgressToken) *mcp.CallToolResult {
	t.Helper()
	res, err := callErr(t, u, tool, args, token)
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	return res
}

// stdioFake is an upstream config that runs a fake upstream as a child.
func stdioFake(name string) Config {
	cmd, env := fakeupstream.Command(name)
	return Config{Name: name, Transport: TransportStdio, Command: cmd, Env: env, Prefix: name + "_"}
}

// allText is the text of every content item of res, one a line.
func allText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, mcp.GetTextFromContent(c))
	}
	return strings.Join(parts, "\n")
}
