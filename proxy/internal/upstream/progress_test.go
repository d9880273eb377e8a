package upstream

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A progress token belongs to the upstream its call went to: another
// upstream's report for it reaches neither the caller nor the call's idle
// timeout, and tokens cannot be guessed from one another.
func TestProgressTokensAreBoundToTheirUpstream(t *testing.T) {
	var p ProgressRouter
	var got []Progress
	token, release := p.Register("alpha", func(pr Progress) { got = append(got, pr) })
	defer release()
	touched := 0
	stop := p.onReport(token, func() { touched++ })
	defer stop()
	report := func(upstream string, progress float64) {
		n := mcp.JSONRPCNotification{}
		n.Params.AdditionalFields = map[string]any{"progressToken": token, "progress": progress}
		p.forward(upstream, n)
	}
	report("beta", 1)
	if len(got) != 0 || touched != 0 {
		t.Fatalf("beta's report for alpha's token was heard: %v, %d touches", got, touched)
	}
	report("alpha", 2)
	if len(got) != 1 || got[0].Progress != 2 || touched != 1 {
		t.Fatalf("alpha's own report: got %v, %d touches; want progress 2 once", got, touched)
	}
	other, release2 := p.Register("alpha", nil)
	defer release2()
	if other == token || !strings.HasPrefix(other, "mcp-router-") || len(other) < len("mcp-router-")+16 {
		t.Errorf("tokens %q and %q: want distinct random tokens", token, other)
	}
}

// A call whose caller asked for no progress is watched under a token of
// its own: its upstream's reports touch it, until release, and no other
// upstream's do.
func TestWatchWithoutACallerToken(t *testing.T) {
	var p ProgressRouter
	touched := 0
	token, release := p.watch("alpha", nil, func() { touched++ })
	key, ok := token.(string)
	if !ok || !strings.HasPrefix(key, tokenPrefix) || len(key) != len(tokenPrefix)+24 {
		t.Fatalf("token %v: want %s and 24 hex digits", token, tokenPrefix)
	}
	report := func(upstream string) {
		n := mcp.JSONRPCNotification{}
		n.Params.AdditionalFields = map[string]any{"progressToken": key, "progress": 1.0}
		p.forward(upstream, n)
	}
	report("beta")
	report("alpha")
	release()
	report("alpha")
	if touched != 1 {
		t.Errorf("touches: got %d, want 1 (alpha's report before release)", touched)
	}
	if len(p.subs) != 0 {
		t.Errorf("after release the router still holds %v", p.subs)
	}
}
