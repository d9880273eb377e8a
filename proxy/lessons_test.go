package proxy

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
	"github.com/mcp-router/mcp-router/state"
)

// learningServer serves two fake upstreams with routing that learns, its
// lessons in the state.db of dir; stop learns the lessons offered, saves
// them and closes the database.
func learningServer(t *testing.T, dir string) (c *sdkClient, mem *lessons.Memory, stop func()) {
	t.Helper()
	db, err := state.Open(t.Context(), state.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	mem, err = lessons.NewMemory(t.Context(), db.Lessons(), lessons.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	// alpha and beta are instances of one server; these tests need both
	// instances' tools offered, as if they were different tools.
	fuse := routing.DefaultFusePolicy()
	fuse.CollapseDuplicates = false
	c = overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{Lessons: mem, Fuse: &fuse}), Lessons: mem})
	return c, mem, func() {
		mem.Close()
		if err := mem.Flush(t.Context()); err != nil {
			t.Error(err)
		}
		db.Close()
	}
}

func topTool(t *testing.T, c *sdkClient, query string) string {
	t.Helper()
	d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": query}))
	if len(d.Tools) == 0 {
		t.Fatalf("%q routed nothing", query)
	}
	return d.Tools[0].Name
}

// Feedback changes later rankings for similar requests, survives a
// restart, and leaves unrelated requests alone.
func TestRoutingFeedbackIsLearnedForGood(t *testing.T) {
	dir := t.TempDir()
	first, _, stop := learningServer(t, dir)
	unrelated := topTool(t, first, "sleep for some milliseconds")
	res := first.call(t, "routing_feedback", map[string]any{"query": "echo the text back", "wrong_tool": "alpha_echo", "right_tool": "beta_echo"})
	if res.IsError {
		t.Fatalf("routing_feedback: %s", resultText(res))
	}
	if got := topTool(t, first, "please echo the text back"); got != "beta_echo" {
		t.Errorf("after feedback: top %s, want beta_echo", got)
	}
	if bad := first.call(t, "routing_feedback", map[string]any{"query": "x", "right_tool": "nope_tool"}); !bad.IsError {
		t.Error("feedback naming an unknown tool was accepted")
	}
	stop()

	second, _, stop2 := learningServer(t, dir)
	defer stop2()
	if got := topTool(t, second, "echo the text back"); got != "beta_echo" {
		t.Errorf("after a restart: top %s, want beta_echo", got)
	}
	if got := topTool(t, second, "sleep for some milliseconds"); got != unrelated {
		t.Errorf("an unrelated request changed: top %s, was %s", got, unrelated)
	}
}

// A session that needed two searches before a tool it was given worked
// teaches routing, and the next session benefits.
func TestRoutingLearnsFromADetour(t *testing.T) {
	c, mem, stop := learningServer(t, t.TempDir())
	defer stop()
	// The first search finds nothing that serves it (the router abstains)
	// or the wrong tool; either way the session searches again.
	first := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "report how far along the job is"}))
	before := "nothing"
	if len(first.Tools) > 0 {
		before = first.Tools[0].Name
	}
	d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "report the progress"}))
	var tool string
	for _, t := range d.Tools {
		if t.Name == "beta_progress" {
			tool = t.Name
		}
	}
	if tool == "" {
		t.Fatalf("the second search did not give beta_progress: %+v", d.Tools)
	}
	if res := c.call(t, "beta_progress", map[string]any{"steps": 1}); res.IsError {
		t.Fatal(resultText(res))
	}
	mem.Close() // the lesson is learned off the call's path
	if after := topTool(t, c, "report how far along the job is"); after != "beta_progress" {
		t.Errorf("after the detour: top %s (was %s), want beta_progress", after, before)
	}
}

// twoLearners serves alpha and beta with routing that learns (lessons in
// a state.db, shared between principals when shared is set) over HTTP to the
// tokens alice and bob.
func twoLearners(t *testing.T, shared bool) (alice, bob *sdkClient) {
	t.Helper()
	db, err := state.Open(t.Context(), state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mem, err := lessons.NewMemory(t.Context(), db.Lessons(), lessons.MemoryOptions{Shared: shared})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mem.Close) // before the database closes
	fuse := routing.DefaultFusePolicy()
	fuse.CollapseDuplicates = false
	srv := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha"), builtinFake("beta")),
		Router: routing.NewRouter(routing.RouterOptions{Lessons: mem, Fuse: &fuse}), Lessons: mem})
	t.Cleanup(srv.Close)
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{BearerTokens: []string{"alice-token", "bob-token"}}))
	t.Cleanup(ts.Close)
	return tokenClientEra(t, ts.URL, "alice-token", sessionEra), tokenClientEra(t, ts.URL, "bob-token", nil)
}

// Lessons are per principal: alice's routing_feedback re-ranks alice's
// requests, not bob's (on either protocol era), unless the operator
// shares lessons, when it re-ranks both.
func TestLessonsPerPrincipal(t *testing.T) {
	for _, shared := range []bool{false, true} {
		alice, bob := twoLearners(t, shared)
		before := topTool(t, bob, "echo the text back")
		other := "beta_echo"
		if before == other {
			other = "alpha_echo"
		}
		res := alice.call(t, "routing_feedback", map[string]any{"query": "echo the text back", "wrong_tool": before, "right_tool": other})
		if res.IsError {
			t.Fatalf("routing_feedback: %s", resultText(res))
		}
		if got := topTool(t, alice, "please echo the text back"); got != other {
			t.Errorf("shared=%v: alice after her feedback: top %s, want %s", shared, got, other)
		}
		want := before
		if shared {
			want = other
		}
		if got := topTool(t, bob, "please echo the text back"); got != want {
			t.Errorf("shared=%v: bob after alice's feedback: top %s, want %s", shared, got, want)
		}
	}
}

// The call that ends a detour returns while Ollama still holds its
// lesson's embedding: learning is off the call's response path.
func TestADetourCallDoesNotWaitForItsLesson(t *testing.T) {
	ollama := fakeollama.New(fakeollama.Options{})
	t.Cleanup(ollama.Close)
	emb, err := routing.NewOllamaEmbedder(routing.OllamaOptions{URL: ollama.URL(), Model: "embed"})
	if err != nil {
		t.Fatal(err)
	}
	db, err := state.Open(t.Context(), state.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	mem, err := lessons.NewMemory(t.Context(), db.Lessons(), lessons.MemoryOptions{Embed: func(ctx context.Context, text string) ([]float32, error) {
		vs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return vs[0], nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	fuse := routing.DefaultFusePolicy()
	fuse.CollapseDuplicates = false
	c := overHTTPWith(t, ServerOptions{Hub: startHub(t, builtinFake("alpha"), builtinFake("beta")),
		Router: routing.NewRouter(routing.RouterOptions{Lessons: mem, Fuse: &fuse}), Lessons: mem})
	c.call(t, "request_more_tools", map[string]any{"query": "report how far along the job is"})
	c.call(t, "request_more_tools", map[string]any{"query": "report the progress"})
	release := ollama.Hold()
	t.Cleanup(release)
	if res := c.call(t, "beta_progress", map[string]any{"steps": 1}); res.IsError {
		t.Fatal(resultText(res))
	}
	if n := mem.Len(); n != 0 {
		t.Errorf("the call returned with %d lessons learned, want 0 while the embedding is held", n)
	}
	release()
	mem.Close()
	if got := mem.List(); len(got) != 1 || got[0].Tool != "beta_progress" {
		t.Errorf("after the embedding: lessons %+v, want one for beta_progress", got)
	}
}
