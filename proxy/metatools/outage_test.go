package metatools

import (
	"strings"
	"testing"

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
