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
