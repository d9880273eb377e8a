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
	_, alerts := findOutages(ups, routing.Discovery{Decision: routing.Decision{Query: "translate a poem", Abstained: true}})
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
