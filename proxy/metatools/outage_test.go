package metatools

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/routing"
)

// A discovery waits for the starting upstreams it may be for: those whose
// description matches its words (scored as the router scores a tool),
// that it names, or whose tools it needs; not the others.
func TestDiscoveryWaitsForTheStartingUpstreamsItMayBeFor(t *testing.T) {
	starting := []Upstream{ // both on their first attempt
		{Name: "weather", Domain: "weather", About: "Weather forecasts: temperature and rain for any city", Starting: true},
		{Name: "notes", Domain: "notes", About: "My personal notes and journal", Starting: true},
	}
	owner := func(tool string) string { // the hub's: the upstream whose prefix the tool has
		for _, u := range starting {
			if strings.HasPrefix(tool, u.Name+"_") {
				return u.Name
			}
		}
		return ""
	}
	for _, tc := range []struct {
		req  routing.Request
		want string
	}{
		{routing.Request{Query: "will it rain in Paris tomorrow"}, "weather"},
		{routing.Request{Query: "what did I write in my journal"}, "notes"},
		{routing.Request{Query: "open the notes server"}, "notes"},
		{routing.Request{Query: "do it", Needs: []string{"weather_forecast"}}, "weather"},
		{routing.Request{Query: "convert 5 km to miles"}, ""},
	} {
		got := mayServe(starting, tc.req, owner)
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%+v: waits for %v, want %q", tc.req, got, tc.want)
		}
	}
}

// During a cold start a discovery says once that the servers are starting,
// naming each with what it is for and how long it has started, and when to
// search again: not one near-identical paragraph per server.
func TestStartingServersAreOneAlert(t *testing.T) {
	since := time.Now().Add(-3 * time.Second)
	ups := []Upstream{
		{Name: "github", About: "Issues and pull requests", Starting: true, Since: since},
		{Name: "notes", About: "My personal notes", Starting: true, Since: since},
		{Name: "fetch", Starting: true, Since: since},
		{Name: "calendar", About: "Meetings", Starting: true, Since: time.Now().Add(-12 * time.Second)},
	}
	_, alerts := findOutages(ups, routing.Request{Query: "translate a poem"}, routing.Discovery{Decision: routing.Decision{Query: "translate a poem", Abstained: true}})
	if len(alerts) != 1 || alerts[0].Kind != alertUpstreamStarting {
		t.Fatalf("got %d alerts %+v, want one upstream_starting", len(alerts), alerts)
	}
	msg := alerts[0].Message
	for _, want := range []string{"github (Issues and pull requests, for 3s)", "notes (My personal notes, for 3s)", "fetch (for 3s)",
		"calendar (Meetings, for 12s)", "are still starting", "not listed yet", "search again in a moment"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the alert lacks %q: %s", want, msg)
		}
	}
}

// Whether a request is for an upstream is decided one way, whatever the
// upstream's state: disabled (an unavailable alert), never connected (an
// alert saying the request names it) or starting (the discovery waits for
// it). These are the requests the three states once judged apart: a word
// shared by chance ("from"), inflected words the description holds in
// another form, and keywords naming the upstream.
func TestAnUpstreamIsNamedOneWayInEveryState(t *testing.T) {
	about := map[string]string{
		"fetch": "Fetches pages from the web and returns their text",
		"met":   "Weather forecasts: temperature and rain for any city",
		"notes": "My personal notes and journal",
	}
	for _, tc := range []struct {
		name string
		req  routing.Request
		up   string
		want bool
	}{
		{"a common word shared by chance", routing.Request{Query: "read a file from disk"}, "fetch", false},
		{"an inflected word of the description", routing.Request{Query: "will it be raining in Paris"}, "met", true},
		{"a plural of the description's word", routing.Request{Query: "show me the temperatures"}, "met", true},
		{"keywords naming the upstream", routing.Request{Query: "do it", Keywords: "notes"}, "notes", true},
		{"intent matching the description", routing.Request{Query: "do it", Intent: "write in my journal"}, "notes", true},
		{"nothing of it", routing.Request{Query: "convert 5 km to miles"}, "met", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := Upstream{Name: tc.up, Domain: tc.up, About: about[tc.up]}
			busy := routing.Discovery{Decision: routing.Decision{Query: tc.req.Query,
				Selected: []routing.Candidate{{Name: "calc_add", Upstream: "calc"}}}} // selected something: no abstention
			disabled := u
			disabled.Disabled, disabled.Reason = true, "bad command"
			outs, _ := findOutages([]Upstream{disabled}, tc.req, busy)
			if got := len(outs) == 1 && outs[0].State == stateDisabled; got != tc.want {
				t.Errorf("disabled: got an outage %v, want %v (%+v)", got, tc.want, outs)
			}
			never := u
			never.DownSince = time.Now()
			outs, _ = findOutages([]Upstream{never}, tc.req, busy)
			if got := len(outs) == 1 && outs[0].named; got != tc.want {
				t.Errorf("never connected: got named %v, want %v (%+v)", got, tc.want, outs)
			}
			starting := u
			starting.Starting = true
			got := mayServe([]Upstream{starting}, tc.req, func(string) string { return "" })
			if (len(got) == 1) != tc.want {
				t.Errorf("starting: waits for %v, want %v", got, tc.want)
			}
		})
	}
}
