package eval

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/routing"
)

// TestDetourTeaches measures what a detour can teach: each request of
// every shared set is searched twice in a fresh session (a detour), and
// the tools a successful call of which would then become its lesson are
// counted against those the two searches handed over, and against its
// gold tools:
//
//	go test -run TestDetourTeaches -v ./routing/eval/
//
// gold is the share of teachable tools that serve the request (a gold
// tool); kept is the share of gold tools handed over that still teach.
func TestDetourTeaches(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a measurement: skipped under -short and the race detector")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-22s %7s %7s %6s %6s\n", "set", "handed", "teach", "gold", "kept")
	for _, s := range ablationSets(t) {
		r := RouterOver(s.tools, routing.RouterOptions{})
		var handed, teach, teachGold, handedGold int
		for _, q := range s.queries {
			if len(q.Groups()) == 0 {
				continue
			}
			sess := r.NewSession(routing.SessionOptions{})
			var given []string
			for range 2 {
				d, _ := sess.Discover(t.Context(), routing.Request{Query: q.Query})
				for _, c := range d.Selected {
					if !slices.Contains(given, c.Name) {
						given = append(given, c.Name)
						handed++
						if isGold(q, c.Name) {
							handedGold++
						}
					}
				}
			}
			for _, name := range sess.State().Given {
				teach++
				if isGold(q, name) {
					teachGold++
				}
			}
		}
		n := float64(max(1, len(s.queries)))
		fmt.Fprintf(&b, "%-22s %7.2f %7.2f %6.3f %6.3f\n", fmt.Sprintf("%s (%d)", s.name, len(s.queries)),
			float64(handed)/n, float64(teach)/n, float64(teachGold)/float64(max(1, teach)), float64(teachGold)/float64(max(1, handedGold)))
	}
	t.Logf("a detour's teachable tools per request (handed: tools two searches hand over; teach: tools whose call after two searches is learned):\n%s", b.String())
}
