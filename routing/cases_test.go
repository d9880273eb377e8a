package routing

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/routing/fuse"
)

// The seeds' and a newcomer's own requests, at the router: each case
// failed before the rule it names.

// smartHomeLogs is a catalog whose only log tool is a smart home's.
func smartHomeLogs() []Tool {
	return []Tool{
		{Name: "ha_get_logs", Upstream: "ha", Description: "Get the logbook entries of Home Assistant: state changes and events of your smart home devices."},
		{Name: "ha_turn_on", Upstream: "ha", Description: "Turn on a Home Assistant light or switch."},
	}
}

// TestRouteLogVariantsSayWhatIsMissing: seed 002's failure ("query logs"
// meant system logs, and the catalog only has a smart home's logs) in the
// seed's own variants, with only the smart-home log tool and with only
// the calculator: the tool is never handed over as if it served the
// request; an alert names the words it does not match (or the router
// abstains).
func TestRouteLogVariantsSayWhatIsMissing(t *testing.T) {
	catalogs := map[string][]Tool{"smart home": smartHomeLogs(), "calculator": seedTools(t)["calculator"]}
	for name, tools := range catalogs {
		r := NewRouter(RouterOptions{})
		r.SetUpstream(tools[0].Upstream, tools)
		for _, tc := range []struct{ query, missing string }{
			{"query logs", `"query"`},
			{"read the system logs", `"system"`},
			{"No, I meant system logs", `"system"`},
		} {
			d := r.Route(context.Background(), Request{Query: tc.query})
			if d.Abstained {
				continue
			}
			a := alertOf(d, "partial_match")
			if a == nil || !strings.Contains(a.Message, tc.missing) {
				t.Errorf("%s %q: handed over %v with alerts %+v, want a partial_match naming %s", name, tc.query, names(d.Selected), d.Alerts, tc.missing)
			}
		}
	}
}

// TestRouteEverydayArithmetic: the words people use for arithmetic find
// the calculator's tool, and a request the ranking serves in each of its
// clauses gets no "no tool matches all" alert.
func TestRouteEverydayArithmetic(t *testing.T) {
	r := seedRouter(t)
	for _, tc := range []struct{ query, want string }{
		{"what's 15% of 240", "calculator_multiply"},
		{"what is 15 percent of 80", "calculator_multiply"},
		{"what is 2 plus 3", "calculator_add"},
		{"6 times 7", "calculator_multiply"},
		{"12 divided by 4", "calculator_divide"},
		{"5 factorial and 16 squared", "calculator_factorial"},
	} {
		d := r.Route(context.Background(), Request{Query: tc.query})
		if d.Abstained || !containsName(d.Selected, tc.want) {
			t.Errorf("%q: selected %v (abstained %v), want %s", tc.query, names(d.Selected), d.Abstained, tc.want)
		}
		if a := alertOf(d, "partial_match"); a != nil {
			t.Errorf("%q: %s, want no partial_match", tc.query, a.Message)
		}
	}
}

// TestRouteNumbersInWordsAreValues: "add two numbers" against a
// calculator whose add tool never says "two" is served whole: a number
// in words is a value, as 2 is, and no partial_match says it is missed.
func TestRouteNumbersInWordsAreValues(t *testing.T) {
	r := NewRouter(RouterOptions{})
	schema := []byte(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`)
	r.SetUpstream("calc", []Tool{
		{Name: "add", Upstream: "calc", Description: "Add numbers together.", InputSchema: schema},
		{Name: "subtract", Upstream: "calc", Description: "Subtract b from a.", InputSchema: schema},
	})
	for _, q := range []string{"add two numbers", "add three numbers"} {
		d := r.Route(context.Background(), Request{Query: q})
		if d.Abstained || !containsName(d.Selected, "add") {
			t.Errorf("%q: selected %v (abstained %v), want add", q, names(d.Selected), d.Abstained)
		}
		if a := alertOf(d, "partial_match"); a != nil {
			t.Errorf("%q: %s, want no partial_match", q, a.Message)
		}
	}
}

// newcomerTools is a catalog like the one a newcomer tried: git and the
// filesystem beside the seeds' built-ins.
func newcomerTools(t *testing.T) map[string][]Tool {
	byUp := seedTools(t)
	byUp["git"] = []Tool{
		{Name: "git_clean", Upstream: "git", Description: "Remove untracked files from the working tree. Cleans up the repository; requires force."},
		{Name: "git_status", Upstream: "git", Description: "Show the working tree status."},
		{Name: "git_stash", Upstream: "git", Description: "Stash the changes in a dirty working directory away and save them for later."},
		{Name: "git_log", Upstream: "git", Description: "Show the commit logs."},
		{Name: "git_reset", Upstream: "git", Description: "Reset current HEAD to the specified state.", Destructive: true},
	}
	return byUp
}

func newcomerRouter(t *testing.T) *Router {
	r := NewRouter(RouterOptions{})
	for up, tools := range newcomerTools(t) {
		r.SetUpstream(up, tools)
	}
	return r
}

// TestRouteDestructiveNeedsItsObject: a destructive tool (by its
// annotations or its name's verb) on a request that does not name what
// it acts on is never handed over alone: it comes with non-destructive
// neighbours and a destructive alert. Named, it is handed over as usual.
func TestRouteDestructiveNeedsItsObject(t *testing.T) {
	r := newcomerRouter(t)
	for _, q := range []string{"clean up my desktop", "reset everything"} {
		d := r.Route(context.Background(), Request{Query: q})
		if d.Abstained {
			continue
		}
		if !slices.ContainsFunc(d.Selected, func(c Candidate) bool { return !r.destructive(c.Name) }) {
			t.Errorf("%q: selected only destructive tools %v", q, names(d.Selected))
		}
		if slices.ContainsFunc(d.Selected, func(c Candidate) bool { return r.destructive(c.Name) }) && alertOf(d, "destructive") == nil {
			t.Errorf("%q: selected %v with alerts %+v, want a destructive alert", q, names(d.Selected), d.Alerts)
		}
	}
	d := r.Route(context.Background(), Request{Query: "git clean the untracked files"})
	if len(d.Selected) == 0 || d.Selected[0].Name != "git_clean" || alertOf(d, "destructive") != nil {
		t.Errorf("git clean: selected %v, alerts %+v; want git_clean first, no destructive alert", names(d.Selected), d.Alerts)
	}
	for _, name := range []string{"git_clean", "git_reset", "memory_delete_entities"} {
		if !r.destructive(name) {
			t.Errorf("%s: not destructive", name)
		}
	}
	if r.destructive("git_status") || r.destructive("fs_read_file") {
		t.Error("git_status or fs_read_file counted destructive")
	}
}

// manual is the built-in manual's tool as its server declares it: of the
// gateway's own domain, for requests that name it.
var manual = Tool{Name: "docs_search_documents", Upstream: "docs", Domain: "mcp-router", Exclusive: true,
	Description: "Search the local documentation: the Markdown and text files in the configured documents folder. Ranks passages by keyword relevance and returns the best ones."}

// TestRouteExclusiveDomain: a tool whose domain is exclusive (the
// built-in manual) is ranked only for requests that name its domain.
func TestRouteExclusiveDomain(t *testing.T) {
	r := NewRouter(RouterOptions{})
	for up, tools := range newcomerTools(t) {
		if up != "docs" {
			r.SetUpstream(up, tools)
		}
	}
	r.SetUpstream("docs", []Tool{manual})
	for _, q := range []string{"search the documentation for the deployment guide", "find documents about invoices", "what did I save about Alice?", "search files for TODO"} {
		d := r.Route(context.Background(), Request{Query: q})
		if slices.ContainsFunc(d.Ranked, func(c Candidate) bool { return c.Upstream == "docs" }) {
			t.Errorf("%q: ranked the manual: %v", q, hitsOf(d.Ranked[:min(5, len(d.Ranked))]))
		}
	}
	for _, q := range []string{"how do I configure mcp-router profiles", "MCP router documentation on quotas"} {
		d := r.Route(context.Background(), Request{Query: q})
		if !containsName(d.Selected, manual.Name) {
			t.Errorf("%q: selected %v, want %s", q, names(d.Selected), manual.Name)
		}
	}
}

// TestRouteTraceShowsTheRoutingQuery: the trace shows the cleaned query
// the ranking read (seed 002's "Query Reconstruction"), beside the
// request as written.
func TestRouteTraceShowsTheRoutingQuery(t *testing.T) {
	var buf strings.Builder
	r := seedRouter(t, RouterOptions{Trace: &buf})
	r.Route(context.Background(), Request{Query: "what is 2 plus 3"})
	var rec struct {
		Query   string
		Routing string `json:"routing_query"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &rec); err != nil {
		t.Fatalf("trace line %q: %v", buf.String(), err)
	}
	if rec.Query != "what is 2 plus 3" || !strings.Contains(rec.Routing, "add") {
		t.Errorf("trace: query %q, routing query %q; want the request and its cleaned form naming add", rec.Query, rec.Routing)
	}
}

// TestDestructiveAnnotations: destructiveHint counts where the server set
// its hints; the spec's defaults, which mcp-go sends for a tool that says
// nothing, do not.
func TestDestructiveAnnotations(t *testing.T) {
	yes, no := new(bool), new(bool)
	*yes = true
	for _, tc := range []struct {
		name                                  string
		readOnly, destructive, idem, openWrld *bool
		want                                  bool
	}{
		{"nothing", nil, nil, nil, nil, false},
		{"the defaults", no, yes, no, yes, false},
		{"destructive, closed world", no, yes, no, no, true},
		{"destructive, idempotent", nil, yes, yes, nil, true},
		{"destructiveHint alone", nil, yes, nil, nil, true},
		{"the defaults but one left out", no, yes, nil, yes, true},
		{"read-only", yes, yes, nil, nil, false},
		{"not destructive", no, no, no, yes, false},
	} {
		if got := Destructive(tc.readOnly, tc.destructive, tc.idem, tc.openWrld); got != tc.want {
			t.Errorf("%s: Destructive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestRouteStatedNeedIsNeverCalledMissing: a need the model states and
// the ranking agrees with (among its top tools) is handed over without
// an abstention or a "missing" alert: seed 000's quick example (a
// simple route, one need) and seed 001's "What is 25 + 37?" with
// tools: [calculator_add].
func TestRouteStatedNeedIsNeverCalledMissing(t *testing.T) {
	r := seedRouter(t)
	r.SetUpstream("google_maps", []Tool{
		{Name: "google_maps_directions", Upstream: "google_maps", Description: "Get directions between two places by car, transit, walking or bicycle."},
		{Name: "google_maps_search_places", Upstream: "google_maps", Description: "Search for places with a text query."},
		{Name: "google_maps_get_place_details", Upstream: "google_maps", Description: "Get the details of a place by its id."},
	})
	for _, req := range []Request{
		{Query: "directions from the station to the museum", Needs: []string{"google_maps_directions"}, Route: fuse.RouteSimple},
		{Query: "how do I get to the museum", Needs: []string{"google_maps_directions"}, Route: fuse.RouteSimple},
		{Query: "What is 25 + 37?", Needs: []string{"calculator_add"}},
	} {
		d := r.Route(context.Background(), req)
		if d.Abstained || !containsName(d.Selected, req.Needs[0]) || alertOf(d, "no_match") != nil || alertOf(d, "partial_match") != nil {
			t.Errorf("%q with needs %v: selected %v, abstained %v, alerts %+v; want the need, no abstention, no missing alert",
				req.Query, req.Needs, names(d.Selected), d.Abstained, d.Alerts)
		}
	}
}

// TestSessionDetourOnlyFromTheSameRequest: a detour's lesson is learned
// only from a call that served the request the detour began with: a
// search for something else in between starts a new detour.
func TestSessionDetourOnlyFromTheSameRequest(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("ha", smartHomeLogs())
	r.SetUpstream("weather", []Tool{{Name: "weather_forecast", Upstream: "weather", Description: "Get the weather forecast for a city."}})
	ctx := context.Background()
	s := r.NewSession(SessionOptions{})
	s.Discover(ctx, Request{Query: "weather in Paris"})
	s.Discover(ctx, Request{Query: "show the smart home logbook"})
	s.Discover(ctx, Request{Query: "Home Assistant logs"})
	if eff := s.Called("ha_get_logs", true); eff.Detour != "show the smart home logbook" {
		t.Errorf("detour %q, want the first query of the same request, not the weather", eff.Detour)
	}
	s.Discover(ctx, Request{Query: "weather in Paris"})
	s.Discover(ctx, Request{Query: "Home Assistant logs"})
	if eff := s.Called("ha_get_logs", true); eff.Detour != "" {
		t.Errorf("a call that served another request: detour %q, want none", eff.Detour)
	}
}

// TestSessionDetourOnlyFromWhatServedIt: a new user's walk, with two
// instances of the filesystem server and the memory server: "read a file
// from my documents" met a collision alert (the instances' read_file) and
// was handed memory_read_graph, kept for sharing "read" though it scored
// under the noise floor; a later call of memory_read_graph taught the
// request that tool. Only a tool the ranking found for the request (at
// the floor) or the model asked for now teaches it.
func TestSessionDetourOnlyFromWhatServedIt(t *testing.T) {
	r := NewRouter(RouterOptions{})
	seed := seedTools(t)
	r.SetUpstream("memory", seed["memory"])
	for _, up := range []string{"fs", "filesystem"} {
		var tools []Tool
		for _, tool := range seed["fs"] {
			own := strings.TrimPrefix(tool.Name, "fs_")
			tool.Name, tool.Upstream, tool.Original, tool.Contract = up+"_"+own, up, own, own
			tools = append(tools, tool)
		}
		r.SetUpstream(up, tools)
	}
	const query = "read a file from my documents"
	s := r.NewSession(SessionOptions{})
	d, _ := s.Discover(context.Background(), Request{Query: query})
	if !containsName(d.Selected, "memory_read_graph") || alertOf(d.Decision, "collision") == nil {
		t.Fatalf("selected %v, alerts %+v; want memory_read_graph handed over and a collision", names(d.Selected), d.Alerts)
	}
	if eff := s.Called("memory_read_graph", true); eff.Detour != "" {
		t.Errorf("a call of memory_read_graph taught %q that tool", eff.Detour)
	}
	s.Discover(context.Background(), Request{Query: query})
	if eff := s.Called("filesystem_read_file", true); eff.Detour != query {
		t.Errorf("a tool of the collision: detour %q, want %q", eff.Detour, query)
	}
	s.Discover(context.Background(), Request{Query: query})
	s.Discover(context.Background(), Request{Query: "read the text of a file", Needs: []string{"memory_read_graph"}})
	if eff := s.Called("memory_read_graph", true); eff.Detour != query {
		t.Errorf("a tool the model asked for: detour %q, want %q", eff.Detour, query)
	}
}

// TestRouteMinQRScoreIsAFloor: a min_qr_score set above the default
// noise floor drops every ranked tool scoring below it (seed 000), where
// keep_coverage used to lift a tool scoring 0.013 over it; at the
// default floor, keep_coverage still hands over what covers enough.
func TestRouteMinQRScoreIsAFloor(t *testing.T) {
	strict := DefaultFusePolicy()
	strict.MinQRScore = 0.9
	r := seedRouter(t, RouterOptions{Fuse: &strict})
	for _, q := range []string{"read the system logs", "what is 2 plus 3", "list the files in my home folder and read notes.txt"} {
		d := r.Route(context.Background(), Request{Query: q})
		for _, c := range d.Selected {
			if c.Score < 0.9 && !slices.Contains(d.Boundary, c.Name) {
				t.Errorf("%q: handed over %s scoring %.3f under min_qr_score 0.9", q, c.Name, c.Score)
			}
		}
	}
	d := seedRouter(t).Route(context.Background(), Request{Query: "read the system logs"})
	if !slices.ContainsFunc(d.Selected, func(c Candidate) bool { return c.Score < DefaultNoiseFloor }) {
		t.Errorf("default floor: selected %v; want keep_coverage to hand over a tool under the floor", hitsOf(d.Selected))
	}
}

// TestRouteWeighsTheRequestsAction: a request that shares only a
// server's name or object with its tools ("remember" and memory; "note"
// and every notes tool) ranks first the tools whose name's verb does what
// it asks (stores, deletes or reads), not all of them alike.
func TestRouteWeighsTheRequestsAction(t *testing.T) {
	notes := []Tool{
		{Name: "notes_create_note", Upstream: "notes", Description: "Create a note with a title and a body."},
		{Name: "notes_delete_note", Upstream: "notes", Description: "Delete a note by its title."},
		{Name: "notes_get_note", Upstream: "notes", Description: "Get a note by its title."},
		{Name: "notes_list_notes", Upstream: "notes", Description: "List the titles of all notes."},
	}
	r := seedRouter(t)
	r.SetUpstream("notes", notes)
	for _, tc := range []struct {
		query  string
		want   []string // one of these is first
		before []string // and ranks above all of these
	}{
		{"remember that Ada likes Go", []string{"memory_create_entities", "memory_add_observations", "memory_create_relations"},
			[]string{"memory_delete_entities", "memory_delete_observations", "memory_delete_relations", "memory_read_graph", "memory_open_nodes", "memory_search_nodes"}},
		{"save a note to buy milk", []string{"notes_create_note"}, []string{"notes_delete_note", "notes_get_note", "notes_list_notes"}},
		{"forget the note about the meeting", []string{"notes_delete_note"}, []string{"notes_create_note", "notes_get_note"}},
		{"what do you remember about Ada?", []string{"memory_search_nodes", "memory_open_nodes", "memory_read_graph"},
			[]string{"memory_create_entities", "memory_add_observations", "memory_create_relations", "memory_delete_entities"}},
		{"show me my note about the meeting", []string{"notes_get_note", "notes_list_notes"}, []string{"notes_create_note", "notes_delete_note"}},
	} {
		d := r.Route(context.Background(), Request{Query: tc.query})
		if d.Abstained || len(d.Ranked) == 0 || !slices.Contains(tc.want, d.Ranked[0].Name) {
			t.Errorf("%q: ranked %v, want one of %v first", tc.query, hitsOf(d.Ranked[:min(6, len(d.Ranked))]), tc.want)
			continue
		}
		top := d.Ranked[0].Score
		for _, c := range d.Ranked {
			if slices.Contains(tc.before, c.Name) && c.Score >= top {
				t.Errorf("%q: %s scores %.3f, as high as the first (%.3f)", tc.query, c.Name, c.Score, top)
			}
		}
	}
}

// TestRouteStoringIsNotWarnedOfDeletes: a request that stores ("remember
// that Alice likes tea") among the memory server's tools is handed its
// storing tools, not its deletes, and gets no destructive alert; a
// request that deletes still gets the deletes.
func TestRouteStoringIsNotWarnedOfDeletes(t *testing.T) {
	r := seedRouter(t)
	d := r.Route(context.Background(), Request{Query: "remember that Alice likes tea"})
	if !containsName(d.Selected, "memory_create_entities") || alertOf(d, "destructive") != nil ||
		slices.ContainsFunc(d.Selected, func(c Candidate) bool { return r.destructive(c.Name) }) {
		t.Errorf("selected %v, alerts %+v; want memory_create_entities, no deletes, no destructive alert", names(d.Selected), d.Alerts)
	}
	if d := r.Route(context.Background(), Request{Query: "forget what you remember about Alice"}); !containsName(d.Selected, "memory_delete_entities") {
		t.Errorf("forget: selected %v, want memory_delete_entities", names(d.Selected))
	}
}

// TestRouteWhatToKeepIsNotTheAction: what a request says to keep ("save
// a note that the meeting moved to 3pm") is content: its words ("moved")
// rank no tool, so the filesystem's move is not handed over.
func TestRouteWhatToKeepIsNotTheAction(t *testing.T) {
	r := seedRouter(t)
	for _, q := range []string{"save a note that the meeting moved to 3pm", "remember that Alice deleted the search results"} {
		d := r.Route(context.Background(), Request{Query: q})
		if slices.ContainsFunc(d.Selected, func(c Candidate) bool { return c.Name == "fs_move_file" || c.Name == "fs_search_files" }) {
			t.Errorf("%q: selected %v, want nothing ranked by what the request says to keep", q, names(d.Selected))
		}
	}
}
