package routing

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// seedRouter is a router over seedTools, configured by opts (the
// defaults when none is given).
func seedRouter(t *testing.T, opts ...RouterOptions) *Router {
	t.Helper()
	r := NewRouter(append(opts, RouterOptions{})[0])
	for up, tools := range seedTools(t) {
		r.SetUpstream(up, tools)
	}
	return r
}

// seedTools are the tools of testdata/seed_catalog.jsonl by upstream:
// the tool texts of the three built-in servers and of the npm memory and
// filesystem servers, as their servers list them.
func seedTools(t *testing.T) map[string][]Tool {
	t.Helper()
	f, err := os.Open("testdata/seed_catalog.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byUp := map[string][]Tool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Name, Upstream, Description string
			InputSchema                 json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("seed_catalog.jsonl: %v", err)
		}
		byUp[line.Upstream] = append(byUp[line.Upstream], Tool{Name: line.Name, Upstream: line.Upstream, Description: line.Description, InputSchema: line.InputSchema})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("seed_catalog.jsonl: %v", err)
	}
	return byUp
}

// TestRouteWordsPeopleUse routes requests in a user's own words, not the
// tools', to the tools that serve them.
func TestRouteWordsPeopleUse(t *testing.T) {
	r := seedRouter(t)
	for _, tc := range []struct {
		query string
		first string // the top tool's name starts with this
		want  string // a tool that must be selected
	}{
		{"remember that Alice works at Acme", "memory_", "memory_create_entities"},
		{"what is 2 plus 3", "calculator_add", "calculator_add"},
		{"What is 25 + 37?", "calculator_add", "calculator_add"},
		{"show me the contents of notes.txt", "fs_read", ""},
		{"open notes.txt", "fs_read", ""},
		{"what's in todo.md", "fs_read", ""},
		{"multiply 6 by 7", "calculator_multiply", "calculator_multiply"},
		{"fetch the page at https://example.com", "web_", "web_fetch_url"},
	} {
		d := r.Route(context.Background(), Request{Query: tc.query})
		if d.Abstained || len(d.Ranked) == 0 {
			t.Errorf("%q: abstained, want %s first (alerts %v)", tc.query, tc.first, d.Alerts)
			continue
		}
		if !strings.HasPrefix(d.Ranked[0].Name, tc.first) {
			t.Errorf("%q: top %s (%.2f), want %s*; ranked %v", tc.query, d.Ranked[0].Name, d.Ranked[0].Score, tc.first, hitsOf(d.Ranked[:min(4, len(d.Ranked))]))
		}
		if tc.want != "" && !containsName(d.Selected, tc.want) {
			t.Errorf("%q: selected %v, want %s among them", tc.query, names(d.Selected), tc.want)
		}
	}
}

func containsName(cs []Candidate, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// TestRouteAbstainsWhenNothingServes: requests no tool of the catalog
// serves select nothing and say which tools came closest, as such.
func TestRouteAbstainsWhenNothingServes(t *testing.T) {
	r := seedRouter(t)
	for _, tc := range []struct {
		query   string
		closest string // a tool the alert names as closest; "" for none
	}{
		// "off" and "in" are stop words: an edit tool's "turn" ... is all
		// that matches, a tenth of the request at most.
		{"turn off the coffee maker in the kitchen", "fs_edit_file"},
		{"book a flight to Paris", ""},
		{"what's the weather in Paris", ""},
	} {
		d := r.Route(context.Background(), Request{Query: tc.query})
		if !d.Abstained || len(d.Selected) != 0 {
			t.Errorf("%q: abstained %v, selected %v; want an abstention", tc.query, d.Abstained, names(d.Selected))
			continue
		}
		a := alertOf(d, "no_match")
		if a == nil {
			t.Errorf("%q: alerts %v, want no_match", tc.query, d.Alerts)
			continue
		}
		if !strings.Contains(a.Message, "Nothing in the catalog serves") {
			t.Errorf("no_match message %q", a.Message)
		}
		if tc.closest != "" && (!slices.Contains(a.Tools, tc.closest) || !strings.Contains(a.Message, "closest: ")) {
			t.Errorf("%q: no_match names %v (%q), want %s among the closest", tc.query, a.Tools, a.Message, tc.closest)
		}
	}
}

// TestRoutePartialMatchAlert: a two-word request that no top tool matches
// in both words is not routed confidently: an alert says which of its
// words each top tool matches and which it does not.
func TestRoutePartialMatchAlert(t *testing.T) {
	builtins := seedRouter(t)
	builtins.SetUpstream("memory", nil)
	builtins.SetUpstream("fs", nil)
	for _, tc := range []struct {
		name, query, tool, says string
	}{
		// Only a logarithm has "log" in its name, and only search tools
		// take a query: neither reads logs.
		{"built-ins", "query logs", "calculator_log", `calculator_log matches "logs", not "query"`},
		{"all", "Query logs", "calculator_log", `calculator_log matches "logs", not "query"`},
		// The memory server deletes entities, not files; the filesystem
		// server has no delete tool.
		{"all", "delete the file", "memory_delete_observations", `memory_delete_observations matches "delete", not "file"`},
	} {
		r := seedRouter(t)
		if tc.name == "built-ins" {
			r = builtins
		}
		d := r.Route(context.Background(), Request{Query: tc.query})
		a := alertOf(d, "partial_match")
		if a == nil || !slices.Contains(a.Tools, tc.tool) || !strings.Contains(a.Message, tc.says) {
			t.Errorf("%s %q: alerts %+v, want a partial_match saying %s", tc.name, tc.query, d.Alerts, tc.says)
		}
	}
	// Both words matched by one tool: no alert.
	d := seedRouter(t).Route(context.Background(), Request{Query: "search nodes"})
	if a := alertOf(d, "partial_match"); a != nil {
		t.Errorf("search nodes: %+v, want no partial_match", a)
	}
}

// TestRouteAbstainStatedNeedsStillLoad: an abstention drops what the
// ranking found, not the tools the model asked for by name.
func TestRouteAbstainStatedNeedsStillLoad(t *testing.T) {
	r := seedRouter(t)
	d := r.Route(context.Background(), Request{Query: "turn off the coffee maker in the kitchen", Needs: []string{"docs_search_documents"}})
	if !d.Abstained || !slices.Equal(names(d.Selected), []string{"docs_search_documents"}) {
		t.Errorf("abstained %v, selected %v; want an abstention with the stated need", d.Abstained, names(d.Selected))
	}
}

// TestRouteAbstainOff: a negative AbstainCoverage turns abstention off.
func TestRouteAbstainOff(t *testing.T) {
	r := seedRouter(t)
	r.opts.AbstainCoverage = 0
	d := r.Route(context.Background(), Request{Query: "turn off the coffee maker in the kitchen"})
	if d.Abstained || len(d.Selected) == 0 {
		t.Errorf("abstained %v, selected %v; want the ranking's tools", d.Abstained, names(d.Selected))
	}
	if o := NewRouter(RouterOptions{AbstainCoverage: -1}).Options(); o.AbstainCoverage != 0 {
		t.Errorf("AbstainCoverage -1 resolved to %v, want 0", o.AbstainCoverage)
	}
}

func alertOf(d Decision, kind string) *Alert {
	for i := range d.Alerts {
		if d.Alerts[i].Kind == kind {
			return &d.Alerts[i]
		}
	}
	return nil
}

// TestRouteAffinityNeverHidesCollision: after a memory call the session's
// domain context lifts the memory tool for "add 2 and 3", yet the near-tie
// with the calculator, decided on the scores before affinity, is still
// reported.
func TestRouteAffinityNeverHidesCollision(t *testing.T) {
	r := seedRouter(t)
	ctx := context.Background()
	s := r.NewSession(SessionOptions{})
	s.Called("memory_create_entities", true)
	d := s.Preview(ctx, Request{Query: "add 2 and 3"})
	if !d.Affinity {
		t.Fatal("no domain context after a call")
	}
	if a := collisionOf(d); a == nil || !slices.Contains(a.Tools, "calculator_add") || !slices.Contains(a.Tools, "memory_add_observations") {
		t.Errorf("alerts %+v, want a collision naming calculator_add and memory_add_observations; ranked %v", d.Alerts, hitsOf(d.Ranked[:min(3, len(d.Ranked))]))
	}
	// Core tools are always on the belt: never named in a collision.
	d = s.Preview(ctx, Request{Query: "add 2 and 3", Core: func(n string) bool { return n == "calculator_add" }})
	if a := collisionOf(d); a != nil && slices.Contains(a.Tools, "calculator_add") {
		t.Errorf("core tool in a collision: %+v", a)
	}
}

// TestRouteAffinityLiftAcrossDomainsIsReported: when the domain context
// ranks first a tool of another domain than the request alone would, the
// alert says so.
func TestRouteAffinityLiftAcrossDomainsIsReported(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("a", []Tool{{Name: "a_tail", Upstream: "a", Domain: "alpha", Description: "Read the recent log entries."}})
	r.SetUpstream("b", []Tool{{Name: "b_tail", Upstream: "b", Domain: "beta", Description: "Read the recent log entries, newest first."}})
	ctx := context.Background()
	const q = "read the recent log entries"
	plain := r.Route(ctx, Request{Query: q})
	if plain.Ranked[0].Name != "a_tail" {
		t.Fatalf("without context: ranked %v; want a_tail first", hitsOf(plain.Ranked))
	}
	d := r.Route(ctx, Request{Query: q, Domains: []string{"beta"}})
	if d.Ranked[0].Name != "b_tail" {
		t.Fatalf("context beta: ranked %v, want b_tail lifted first", hitsOf(d.Ranked))
	}
	a := collisionOf(d)
	if a == nil || !strings.Contains(a.Message, "only because") || !slices.Contains(a.Tools, "a_tail") {
		t.Errorf("alerts %+v, want one saying the context ranked b_tail first", d.Alerts)
	}
}

func collisionOf(d Decision) *Alert {
	for i := range d.Alerts {
		if d.Alerts[i].Kind == "collision" {
			return &d.Alerts[i]
		}
	}
	return nil
}

// TestRouteKeywords: the model's keywords join the request for the
// lexical ranking; its intent (for embeddings) does not change it.
func TestRouteKeywords(t *testing.T) {
	r := seedRouter(t)
	ctx := context.Background()
	vague := "I need to do that thing with my notes again"
	d := r.Route(ctx, Request{Query: vague, Keywords: "read file"})
	if len(d.Ranked) == 0 || !strings.HasPrefix(d.Ranked[0].Name, "fs_read") {
		t.Errorf("with keywords: ranked %v, want a read tool first", hitsOf(d.Ranked[:min(3, len(d.Ranked))]))
	}
	plain := r.Route(ctx, Request{Query: "query logs"})
	withIntent := r.Route(ctx, Request{Query: "query logs", Intent: "Add two numbers."})
	if !slices.Equal(names(plain.Ranked), names(withIntent.Ranked)) {
		t.Errorf("intent changed the lexical ranking: %v, was %v", names(withIntent.Ranked), names(plain.Ranked))
	}
}

// TestRouteIntentGoesToTheSemanticArm: with embeddings, the model's
// intent is what is embedded for the request, not its query. (A fake
// embedder: this proves the wiring, not the quality.)
func TestRouteIntentGoesToTheSemanticArm(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	e := embedFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, texts...)
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = []float32{1, 0}
		}
		return out, nil
	})
	sem := NewSemanticIndex(SemanticOptions{Embedder: e})
	r := NewRouter(RouterOptions{Semantic: sem})
	tools := []Tool{{Name: "add", Upstream: "calc", Description: "Add two numbers."}}
	r.SetUpstream("calc", tools)
	if err := r.Embed(context.Background(), "calc", tools); err != nil {
		t.Fatal(err)
	}
	r.Route(context.Background(), Request{Query: "what is 2 plus 3", Intent: "Add two numbers together."})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(asked, "Add two numbers together.") || slices.Contains(asked, "what is 2 plus 3") {
		t.Errorf("embedded %q, want the intent and not the query", asked)
	}
}
