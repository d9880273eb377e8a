package routing

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/routing/fuse"
)

// testCatalog is a small catalog with two domains that share words.
func testRouter(t *testing.T, opts RouterOptions) *Router {
	t.Helper()
	r := NewRouter(opts)
	r.SetUpstream("ha", []Tool{
		{Name: "ha_get_logs", Original: "get_logs", Upstream: "ha", Domain: "homeassistant", Description: "Get the Home Assistant logbook: logs of device events and automations."},
		{Name: "ha_turn_on", Original: "turn_on", Upstream: "ha", Domain: "homeassistant", Description: "Turn on a light, switch or other device in the home."},
		{Name: "ha_list_devices", Original: "list_devices", Upstream: "ha", Domain: "homeassistant", Description: "List the devices of the home."},
		{Name: "ha_search_entities", Original: "search_entities", Upstream: "ha", Domain: "homeassistant", Description: "Search entities by name."},
		{Name: "ha_get_state", Original: "get_state", Upstream: "ha", Domain: "homeassistant", Description: "Get the state of an entity."},
	})
	r.SetUpstream("sys", []Tool{
		{Name: "sys_get_logs", Original: "get_logs", Upstream: "sys", Domain: "system", Description: "Get the system logs of services and the kernel."},
		{Name: "sys_disk_usage", Original: "disk_usage", Upstream: "sys", Domain: "system", Description: "Show disk usage of file systems."},
	})
	r.SetUpstream("calc", []Tool{
		{Name: "calc_divide", Original: "divide", Upstream: "calc", Description: "Divide a by b and return the quotient.",
			InputSchema: []byte(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`)},
		{Name: "calc_sqrt", Original: "sqrt", Upstream: "calc", Description: "Square root of x."},
	})
	return r
}

func selectedNames(d Decision) []string {
	out := make([]string, len(d.Selected))
	for i, c := range d.Selected {
		out[i] = c.Name
	}
	return out
}

func TestRouteSelectsRelevantToolsWithoutPadding(t *testing.T) {
	r := testRouter(t, RouterOptions{})
	d := r.Route(context.Background(), Request{Query: "divide 10 by 4"})
	if len(d.Selected) == 0 || d.Selected[0].Name != "calc_divide" {
		t.Fatalf("got %v, want calc_divide first", selectedNames(d))
	}
	for _, c := range d.Selected {
		if c.Score < r.Options().Fuse.MinQRScore {
			t.Errorf("selected %s with score %.3f below the noise floor", c.Name, c.Score)
		}
	}
	none := r.Route(context.Background(), Request{Query: "book a flight to Lisbon"})
	if len(none.Selected) != 0 {
		t.Errorf("unrelated query selected %v, want nothing", selectedNames(none))
	}
	if len(none.Alerts) != 1 || none.Alerts[0].Kind != "no_match" {
		t.Errorf("unrelated query alerts %+v, want one no_match", none.Alerts)
	}
}

func TestRouteScoresAreCalibrated(t *testing.T) {
	r := testRouter(t, RouterOptions{})
	for _, q := range []string{"logs", "turn on the kitchen light", "divide", "zzz"} {
		d := r.Route(context.Background(), Request{Query: q, Domains: []string{"homeassistant"}})
		for _, c := range d.Ranked {
			if c.Score < 0 || c.Score > 1 || c.RawScore < 0 || c.RawScore > 1 {
				t.Errorf("%q: %s score %.3f raw %.3f outside [0, 1]", q, c.Name, c.Score, c.RawScore)
			}
		}
	}
}

func TestRouteDomainAffinity(t *testing.T) {
	r := testRouter(t, RouterOptions{})
	ctx := context.Background()
	plain := r.Route(ctx, Request{Query: "query logs"})
	if plain.Affinity {
		t.Error("no domain context: affinity applied")
	}
	for _, c := range plain.Ranked {
		if c.Multiplier != 1 || c.Score != c.RawScore {
			t.Errorf("no context: %s multiplier %v", c.Name, c.Multiplier)
		}
	}
	for _, tt := range []struct{ domain, want string }{{"system", "sys_get_logs"}, {"homeassistant", "ha_get_logs"}} {
		d := r.Route(ctx, Request{Query: "get the logs", Domains: []string{tt.domain}})
		if d.Ranked[0].Name != tt.want {
			t.Errorf("context %s: top is %s, want %s", tt.domain, d.Ranked[0].Name, tt.want)
		}
		for _, c := range d.Ranked {
			want := DefaultCrossDomain
			if c.Domain == tt.domain {
				want = DefaultSameDomain
			}
			if c.Multiplier != want {
				t.Errorf("context %s: %s (domain %s) multiplier %v, want %v", tt.domain, c.Name, c.Domain, c.Multiplier, want)
			}
		}
	}
}

func TestRouteCollisionAlert(t *testing.T) {
	r := NewRouter(RouterOptions{})
	same := "Read the recent log entries."
	r.SetUpstream("a", []Tool{{Name: "a_read_logs", Upstream: "a", Domain: "alpha", Description: same}})
	r.SetUpstream("b", []Tool{{Name: "b_read_logs", Upstream: "b", Domain: "beta", Description: same}})
	d := r.Route(context.Background(), Request{Query: "read the logs"})
	if len(d.Alerts) != 1 || d.Alerts[0].Kind != "collision" {
		t.Fatalf("alerts %+v, want one collision", d.Alerts)
	}
	a := d.Alerts[0]
	if !cmp.Equal(sorted(a.Tools), []string{"a_read_logs", "b_read_logs"}) || !cmp.Equal(sorted(a.Domains), []string{"alpha", "beta"}) {
		t.Errorf("alert names %v %v, want both tools and both domains", a.Tools, a.Domains)
	}
	// Same domain: no alert.
	r.SetUpstream("b", []Tool{{Name: "b_read_logs", Upstream: "b", Domain: "alpha", Description: same}})
	if d := r.Route(context.Background(), Request{Query: "read the logs"}); len(d.Alerts) != 0 {
		t.Errorf("same domain: alerts %+v, want none", d.Alerts)
	}
	// Far apart: no alert.
	r.SetUpstream("b", []Tool{{Name: "b_other", Upstream: "b", Domain: "beta", Description: "Logs."}})
	if d := r.Route(context.Background(), Request{Query: "read the recent log entries"}); len(d.Alerts) != 0 {
		t.Errorf("clear winner: alerts %+v, want none", d.Alerts)
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestRouteBoundaryLoading(t *testing.T) {
	r := testRouter(t, RouterOptions{})
	d := r.Route(context.Background(), Request{Query: "turn on the light"})
	got := selectedNames(d)
	if len(got) == 0 || got[0] != "ha_turn_on" {
		t.Fatalf("got %v, want ha_turn_on first", got)
	}
	if len(d.Boundary) != boundaryPerUpstream {
		t.Errorf("boundary %v, want %d discovery tools of ha", d.Boundary, boundaryPerUpstream)
	}
	for _, name := range d.Boundary {
		tool, _ := r.Tool(name)
		if tool.Upstream != "ha" || !r.isDiscovery(tool) {
			t.Errorf("boundary tool %s is not a discovery tool of ha", name)
		}
	}
	off := testRouter(t, RouterOptions{DiscoveryPrefixes: []string{}})
	if d := off.Route(context.Background(), Request{Query: "turn on the light"}); len(d.Boundary) != 0 {
		t.Errorf("boundary loading off: got %v", d.Boundary)
	}
	capped := fuse.DefaultPolicy()
	capped.MaxTools = 1
	one := testRouter(t, RouterOptions{Fuse: &capped})
	if d := one.Route(context.Background(), Request{Query: "turn on the light"}); len(d.Selected) != 1 {
		t.Errorf("max_tools 1: selected %v", selectedNames(d))
	}
}

func TestRouteNeedsAndRoutes(t *testing.T) {
	r := testRouter(t, RouterOptions{DiscoveryPrefixes: []string{}})
	ctx := context.Background()
	d := r.Route(ctx, Request{Query: "disk usage", Needs: []string{"calc_sqrt", "nope_tool"}})
	if got := selectedNames(d); len(got) < 2 || got[0] != "calc_sqrt" || got[1] != "sys_disk_usage" {
		t.Errorf("needs first: got %v", got)
	}
	if !cmp.Equal(d.Unknown, []string{"nope_tool"}) {
		t.Errorf("unknown %v, want [nope_tool]", d.Unknown)
	}
	for _, route := range []fuse.Route{fuse.RouteGeneralChat, fuse.RouteExit} {
		if d := r.Route(ctx, Request{Query: "disk usage", Route: route}); len(d.Selected) != 0 {
			t.Errorf("%s: selected %v, want none", route, selectedNames(d))
		}
	}
	if d := r.Route(ctx, Request{Query: "logs journal", Route: fuse.RouteSimple}); len(d.Selected) != 1 {
		t.Errorf("SIMPLE_TOOL: selected %v, want one", selectedNames(d))
	}
	excl := r.Route(ctx, Request{Query: "disk usage", Exclude: func(n string) bool { return n == "sys_disk_usage" }})
	if slices.Contains(selectedNames(excl), "sys_disk_usage") {
		t.Error("an excluded tool was selected")
	}
}

func TestRouteRemovedUpstream(t *testing.T) {
	r := testRouter(t, RouterOptions{})
	r.SetUpstream("calc", nil)
	d := r.Route(context.Background(), Request{Query: "divide a by b"})
	if slices.ContainsFunc(d.Ranked, func(c Candidate) bool { return c.Upstream == "calc" }) {
		t.Errorf("removed upstream still ranked: %v", selectedNames(d))
	}
}

func TestSessionBeltEvictsLeastRecentlyUsed(t *testing.T) {
	r := testRouter(t, RouterOptions{DiscoveryPrefixes: []string{}})
	s := r.NewSession(SessionOptions{MaxTools: 2})
	ctx := context.Background()
	d1, _ := s.Discover(ctx, Request{Query: "divide", Route: fuse.RouteSimple})
	d2, _ := s.Discover(ctx, Request{Query: "disk usage", Route: fuse.RouteSimple})
	if !cmp.Equal(s.Belt(), []string{"calc_divide", "sys_disk_usage"}) || !d1.Changed() || !cmp.Equal(d2.Added, []string{"sys_disk_usage"}) {
		t.Fatalf("belt %v after two discoveries (added %v, %v)", s.Belt(), d1.Added, d2.Added)
	}
	s.Called("calc_divide", true) // now sys_disk_usage is the least recently used
	d3, _ := s.Discover(ctx, Request{Query: "turn on the light", Route: fuse.RouteSimple})
	if !cmp.Equal(d3.Evicted, []string{"sys_disk_usage"}) || !cmp.Equal(s.Belt(), []string{"calc_divide", "ha_turn_on"}) {
		t.Errorf("evicted %v, belt %v; want sys_disk_usage evicted", d3.Evicted, s.Belt())
	}
	again, _ := s.Discover(ctx, Request{Query: "turn on the light", Route: fuse.RouteSimple})
	if again.Changed() {
		t.Errorf("rediscovering a belt tool changed the belt: %+v %+v", again.Added, again.Evicted)
	}
	if s.Retain(func(n string) bool { return n != "ha_turn_on" }); !cmp.Equal(s.Belt(), []string{"calc_divide"}) {
		t.Errorf("Retain: belt %v", s.Belt())
	}
}

func TestSessionBreaker(t *testing.T) {
	now := time.Unix(0, 0)
	r := testRouter(t, RouterOptions{})
	s := r.NewSession(SessionOptions{MaxDiscoveries: 3, ResetAfter: time.Minute, Now: func() time.Time { return now }})
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		d, err := s.Discover(ctx, Request{Query: "logs"})
		if err != nil {
			t.Fatalf("discovery %d: %v", i, err)
		}
		if d.Breaker.Open != (i == 3) {
			t.Errorf("after discovery %d breaker open = %v", i, d.Breaker.Open)
		}
	}
	if _, err := s.Discover(ctx, Request{Query: "logs"}); !errors.Is(err, ErrBreakerOpen) {
		t.Fatalf("4th discovery: %v, want ErrBreakerOpen", err)
	}
	if s.Called("ha_get_logs", false).Reopened || !s.BreakerOpen() {
		t.Error("a failed call closed the breaker")
	}
	if !s.Called("ha_get_logs", true).Reopened || s.BreakerOpen() {
		t.Error("a successful call did not reopen discovery")
	}
	for range 3 {
		s.Discover(ctx, Request{Query: "logs"})
	}
	now = now.Add(59 * time.Second)
	if !s.BreakerOpen() {
		t.Error("breaker closed before reset_after")
	}
	now = now.Add(2 * time.Second)
	if s.BreakerOpen() {
		t.Error("breaker still open after reset_after of quiet")
	}
}

func TestSessionDomainContext(t *testing.T) {
	r := testRouter(t, RouterOptions{})
	s := r.NewSession(SessionOptions{ContextSize: 2})
	if d := s.Preview(context.Background(), Request{Query: "logs"}); d.Affinity {
		t.Error("a new session has a domain context")
	}
	s.Called("sys_disk_usage", true)
	s.Called("calc_divide", true)
	s.Called("ha_turn_on", false)
	if got := s.Domains(); !cmp.Equal(got, []string{"homeassistant", "calc"}) {
		t.Errorf("domains %v, want the two most recent, newest first", got)
	}
	if d := s.Preview(context.Background(), Request{Query: "get the logs"}); !d.Affinity || d.Ranked[0].Name != "ha_get_logs" {
		t.Errorf("preview with homeassistant context ranked %s first", d.Ranked[0].Name)
	}
	if s.Called("not_a_tool", true).Reopened {
		t.Error("an unknown tool reopened discovery")
	}
}

func TestSessionDetourIsALesson(t *testing.T) {
	r := testRouter(t, RouterOptions{})
	ctx := context.Background()
	s := r.NewSession(SessionOptions{})
	s.Discover(ctx, Request{Query: "show disk space"})
	s.Discover(ctx, Request{Query: "disk usage"})
	if eff := s.Called("sys_disk_usage", true); eff.Detour != "show disk space" {
		t.Errorf("after two searches: detour %q, want the first query", eff.Detour)
	}
	s.Discover(ctx, Request{Query: "disk usage"})
	if eff := s.Called("sys_disk_usage", true); eff.Detour != "" {
		t.Errorf("one search is no detour: got %q", eff.Detour)
	}
	s.Discover(ctx, Request{Query: "zebra"})
	s.Discover(ctx, Request{Query: "quokka"})
	if eff := s.Called("calc_divide", true); eff.Detour != "" {
		t.Errorf("a tool the searches did not give is no lesson: got %q", eff.Detour)
	}
}

func TestRouteTwoRequestsInOne(t *testing.T) {
	r := testRouter(t, RouterOptions{DiscoveryPrefixes: []string{}})
	d := r.Route(context.Background(), Request{Query: "divide 81 by 9 and take the square root"})
	got := selectedNames(d)
	if !slices.Contains(got, "calc_divide") || !slices.Contains(got, "calc_sqrt") {
		t.Errorf("selected %v, want both calc_divide and calc_sqrt", got)
	}
}

// boostFirst is a Reranker that adds 0.1 to one tool.
type boostFirst struct{ tool string }

func (b boostFirst) Rerank(_ context.Context, _, _ string, hits []Hit) []Hit {
	out := slices.Clone(hits)
	for i := range out {
		if out[i].Name == b.tool {
			out[i].Score = min(1, out[i].Score+0.1)
		}
	}
	return out
}

func TestRouteTraceFileRecordsLessons(t *testing.T) {
	var buf strings.Builder
	r := testRouter(t, RouterOptions{Trace: &buf, Lessons: boostFirst{"sys_disk_usage"}})
	d := r.Route(context.Background(), Request{Query: "disk usage", Domains: []string{"system"}})
	if i := slices.IndexFunc(d.Ranked, func(c Candidate) bool { return c.Name == "sys_disk_usage" }); i < 0 || d.Ranked[i].Lesson <= 0 {
		t.Fatalf("the lesson's delta is not on the candidate: %+v", d.Ranked)
	}
	var rec struct {
		Query    string
		Affinity bool
		Top      []Candidate
		Selected []string
		Lessons  []string
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &rec); err != nil {
		t.Fatalf("trace line %q: %v", buf.String(), err)
	}
	if rec.Query != "disk usage" || !rec.Affinity || len(rec.Top) == 0 || !slices.Contains(rec.Lessons, "sys_disk_usage") {
		t.Errorf("trace record %+v", rec)
	}
}

// TestRouteHandsOverTopKByCoverage: a top-k tool that matches a good part
// of the request is handed over although its calibrated score, which
// falls with its distance from the top tool, is under the noise floor.
func TestRouteHandsOverTopKByCoverage(t *testing.T) {
	tools := []Tool{
		{Name: "paper_finder", Description: "Find academic research papers on a topic in journals and preprints."},
		{Name: "research_helper", Description: "Helps with research."},
		{Name: "weather", Description: "Weather forecast for a city."},
	}
	const req = "find academic research papers on this topic"
	route := func(keep float64) Decision {
		r := NewRouter(RouterOptions{KeepCoverage: keep})
		r.SetUpstream("up", tools)
		return r.Route(t.Context(), Request{Query: req})
	}
	on, off := route(0), route(-1)
	i := slices.IndexFunc(on.Ranked, func(c Candidate) bool { return c.Name == "research_helper" })
	if i < 0 {
		t.Fatalf("research_helper not ranked: %v", on.Ranked)
	}
	c := on.Ranked[i]
	if c.Score >= DefaultNoiseFloor || c.Coverage < DefaultKeepCoverage {
		t.Fatalf("research_helper scores %.2f at coverage %.2f; the test wants it under the noise floor %.2f at coverage %.2f or more",
			c.Score, c.Coverage, DefaultNoiseFloor, DefaultKeepCoverage)
	}
	if got := selectedNames(on); !slices.Contains(got, "research_helper") || got[0] != "paper_finder" {
		t.Errorf("selected %v, want paper_finder first and research_helper", got)
	}
	if got := selectedNames(off); slices.Contains(got, "research_helper") {
		t.Errorf("with keep_coverage off, selected %v, want no research_helper", got)
	}
	if got := selectedNames(on); slices.Contains(got, "weather") {
		t.Errorf("selected %v, want no weather: it matches nothing", got)
	}
}

// TestRouteHandsOverARankingPrefix: what a discovery hands over is a
// prefix of the ranking. "rental property" reaches the renting tool
// through the word's derived form (rent), which ranks it first but
// counts little in its coverage, so its score is under the noise floor;
// the agency finder, ranked below it on "find" alone, covers more of the
// request's words. Handing over the finder but not the tool ranked above
// it lost people's requests (metatool's belt R@5 0.644, now 0.682).
func TestRouteHandsOverARankingPrefix(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("up", []Tool{
		{Name: "HouseRentingTool", Description: "Tool that provide all sorts of information about house renting"},
		{Name: "HousePurchasingTool", Description: "Tool that provide all sorts of information about house purchasing"},
		{Name: "find_agency", Description: "Find top marketing and design agencies around the World by service, locations, and ratings."},
		{Name: "SuperchargeMyEV", Description: "Find superchargers for non-Tesla vehicles for a specific location."},
		{Name: "weather", Description: "Weather forecast for a city."},
	})
	d := r.Route(t.Context(), Request{Query: "Can you help me find a rental property in Tokyo?"})
	if len(d.Ranked) < 2 || d.Ranked[0].Name != "HouseRentingTool" {
		t.Fatalf("ranked %v, want HouseRentingTool first", d.Ranked)
	}
	top := d.Ranked[0]
	if top.Score >= DefaultNoiseFloor || top.Coverage >= DefaultKeepCoverage {
		t.Fatalf("HouseRentingTool scores %.2f at coverage %.2f; the test wants it under the noise floor %.2f and under coverage %.2f",
			top.Score, top.Coverage, DefaultNoiseFloor, DefaultKeepCoverage)
	}
	got := selectedNames(d)
	last := -1 // the deepest ranked tool handed over
	for i, c := range d.Ranked {
		if slices.Contains(got, c.Name) {
			last = i
		}
	}
	if last < 1 {
		t.Fatalf("selected %v from %v: the test wants a tool below the top passing on its coverage", got, d.Ranked)
	}
	for _, c := range d.Ranked[:last] {
		if !slices.Contains(got, c.Name) {
			t.Errorf("selected %v: %s, ranked above the handed-over %s, is missing", got, c.Name, d.Ranked[last].Name)
		}
	}
}

// TestRouteBoundaryLoadingKeepsThePolicy: the discovery tools loaded with
// a selected upstream obey the route's cardinality, the allowlist and
// the user-facing filter, as the fused tools do.
func TestRouteBoundaryLoadingKeepsThePolicy(t *testing.T) {
	const req = "turn on the light"
	for _, tc := range []struct {
		name   string
		policy func(*fuse.Policy)
		route  fuse.Route
		want   []string
	}{
		{"simple route holds one tool", func(*fuse.Policy) {}, fuse.RouteSimple, []string{"ha_turn_on"}},
		{"general chat holds none", func(*fuse.Policy) {}, fuse.RouteGeneralChat, nil},
		{"allowlist of one tool", func(p *fuse.Policy) { p.AllowedCapabilities = []string{"ha_turn_on"} }, fuse.RouteUnspecified, []string{"ha_turn_on"}},
		{"allowlist with a discovery tool", func(p *fuse.Policy) { p.AllowedCapabilities = []string{"ha_turn_on", "ha_get_state"} }, fuse.RouteUnspecified,
			[]string{"ha_turn_on", "ha_get_state"}},
		{"internal tools stay off the belt", func(p *fuse.Policy) {
			p.AllowedCapabilities = []string{"ha_turn_on", "ha_get_state", "ha_list_devices"}
			p.InternalTools = []string{"ha_get_state"}
		}, fuse.RouteUnspecified, []string{"ha_turn_on", "ha_list_devices"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultFusePolicy()
			tc.policy(&p)
			r := testRouter(t, RouterOptions{Fuse: &p})
			d := r.Route(context.Background(), Request{Query: req, Route: tc.route})
			got := selectedNames(d)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("selected %v, want %v", got, want)
			}
		})
	}
}

// TestRouteInternalToolIsNeverSelected: a tool listed as internal is not
// handed over, stated or ranked, with require_user_facing; without it, it
// is.
func TestRouteInternalToolIsNeverSelected(t *testing.T) {
	for _, require := range []bool{true, false} {
		p := DefaultFusePolicy()
		p.RequireUserFacing = require
		p.InternalTools = []string{"calc_divide"}
		r := testRouter(t, RouterOptions{Fuse: &p})
		d := r.Route(context.Background(), Request{Query: "divide 10 by 4", Needs: []string{"calc_divide"}})
		if got := slices.Contains(selectedNames(d), "calc_divide"); got != !require {
			t.Errorf("require_user_facing %v: calc_divide selected %v, want %v (selected %v)", require, got, !require, selectedNames(d))
		}
	}
}

// TestSessionSuccessRate: the share of the session's last calls that
// succeeded, -1 before any, reading only the last successWindow.
func TestSessionSuccessRate(t *testing.T) {
	s := testRouter(t, RouterOptions{}).NewSession(SessionOptions{})
	if got := s.SuccessRate(); got != -1 {
		t.Fatalf("before any call: got %v, want -1", got)
	}
	s.Called("calc_divide", true)
	s.Called("calc_divide", false)
	s.Called("no_such_tool", false) // not a catalog tool: not counted
	if got := s.SuccessRate(); got != 0.5 {
		t.Errorf("one of two: got %v, want 0.5", got)
	}
	for range successWindow {
		s.Called("calc_sqrt", true)
	}
	if got := s.SuccessRate(); got != 1 {
		t.Errorf("after %d successes: got %v, want 1", successWindow, got)
	}
}

// TestRouteRequestTopK: a request's TopK replaces the router's for it.
func TestRouteRequestTopK(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("up", []Tool{
		{Name: "paper_finder", Description: "Find academic research papers on a topic in journals and preprints."},
		{Name: "research_helper", Description: "Helps with research."},
		{Name: "weather", Description: "Weather forecast for a city."},
	})
	const req = "find academic research papers on this topic"
	if got := selectedNames(r.Route(t.Context(), Request{Query: req, TopK: 1})); !slices.Equal(got, []string{"paper_finder"}) {
		t.Errorf("TopK 1: selected %v, want [paper_finder]", got)
	}
	if got := selectedNames(r.Route(t.Context(), Request{Query: req})); len(got) != 2 {
		t.Errorf("default TopK: selected %v, want both", got)
	}
}

// TestRouteConcurrentRequestsAgree routes requests from several
// goroutines at once through one router, whose searches share pooled
// scratch space: each answer ranks as the same request does alone.
func TestRouteConcurrentRequestsAgree(t *testing.T) {
	r := seedRouter(t)
	queries := []string{
		"find the file, then search it for the word and also look up the notes",
		"remember that Alice works at Acme",
		"divide 10 by 4 and take the square root",
		"delete the file",
		"read notes.txt and then send it by email to bob@example.com",
	}
	want := make([][]string, len(queries))
	for i, q := range queries {
		want[i] = names(r.Route(t.Context(), Request{Query: q}).Ranked)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for n := range 50 {
				i := (w + n) % len(queries)
				if got := names(r.Route(t.Context(), Request{Query: queries[i]}).Ranked); !slices.Equal(got, want[i]) {
					t.Errorf("%q routed concurrently: got %v, want %v", queries[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestRouteHandsOverATopToolPerClause: a request of two clauses keeps one
// tool more by rank than top_k, so that each ask's best tool is handed
// over, while a request of one clause keeps top_k.
func TestRouteHandsOverATopToolPerClause(t *testing.T) {
	r := NewRouter(RouterOptions{TopK: 1, Threshold: 0.99})
	r.SetUpstream("up", []Tool{
		{Name: "weather_current", Description: "Current weather for a city."},
		{Name: "weather_forecast", Description: "Weather forecast for a city, for the next days."},
		{Name: "currency_convert", Description: "Convert an amount of money from one currency to another."},
		{Name: "currency_rates", Description: "Exchange rates of a currency."},
		{Name: "notes_add", Description: "Add a note."},
	})
	one := selectedNames(r.Route(t.Context(), Request{Query: "show the current weather in Paris"}))
	if len(one) != 1 || one[0] != "weather_current" {
		t.Errorf("one clause: selected %v, want [weather_current]", one)
	}
	two := selectedNames(r.Route(t.Context(), Request{Query: "show the current weather in Paris, then convert 10 dollars to euros"}))
	if len(two) != 2 || !slices.Contains(two, "weather_current") || !slices.Contains(two, "currency_convert") {
		t.Errorf("two clauses: selected %v, want weather_current and currency_convert", two)
	}
}
