package proxy

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/proxy/call"
)

func TestMetricsCallsCountsAndKeepsTheLatestFailures(t *testing.T) {
	m := NewMetrics()
	m.CallDone("calc", "add", 0, "")
	m.CallDone("calc", "add", 0, "")
	m.ToolError("calc", "add")
	for i := range recentFailures + 2 {
		m.CallDone("web", fmt.Sprintf("fetch%d", i), 0, string(call.KindTimeout))
	}
	served, failed, recent := m.Calls()
	if served != 2+recentFailures+2 || failed != 1+recentFailures+2 {
		t.Errorf("got %d served, %d failed; want %d and %d", served, failed, 2+recentFailures+2, 1+recentFailures+2)
	}
	if len(recent) != recentFailures || recent[0].Tool != "fetch2" || recent[len(recent)-1].Tool != fmt.Sprintf("fetch%d", recentFailures+1) {
		t.Errorf("recent: %+v, want the latest %d, oldest first", recent, recentFailures)
	}
	if recent[0].Kind != string(call.KindTimeout) || recent[0].Upstream != "web" {
		t.Errorf("recent[0] = %+v", recent[0])
	}
	var none *Metrics
	if s, f, r := none.Calls(); s != 0 || f != 0 || r != nil {
		t.Error("a nil *Metrics reports calls")
	}
}

func TestMetricsRecentCallsNewestFirstAndBounded(t *testing.T) {
	m := NewMetrics()
	m.CallDone("calc", "add", time.Millisecond, "")
	m.ToolError("calc", "add")
	m.CallDone("calc", "divide", 2*time.Millisecond, "")
	calls := m.RecentCalls()
	if len(calls) != 2 || calls[0].Tool != "divide" || calls[1].Tool != "add" {
		t.Fatalf("got %+v, want divide then add", calls)
	}
	if calls[1].Kind != "tool_error" || calls[0].Kind != "" || calls[0].Dur != 2*time.Millisecond {
		t.Errorf("got %+v, want add marked tool_error and divide ok in 2ms", calls)
	}
	for i := range recentCallsKept + 5 {
		m.CallDone("web", fmt.Sprintf("fetch%d", i), 0, string(call.KindTimeout))
	}
	calls = m.RecentCalls()
	if len(calls) != recentCallsKept || calls[0].Tool != fmt.Sprintf("fetch%d", recentCallsKept+4) || calls[len(calls)-1].Tool != "fetch5" {
		t.Errorf("after %d more: %d calls from %s to %s, want the latest %d, newest first",
			recentCallsKept+5, len(calls), calls[0].Tool, calls[len(calls)-1].Tool, recentCallsKept)
	}
	var none *Metrics
	if none.RecentCalls() != nil {
		t.Error("a nil *Metrics reports calls")
	}
}

// A call the client cancelled is not a failure: it is counted apart and
// kept out of the latest failures, though the recent calls still show it.
func TestMetricsCallsCountsCancelledApart(t *testing.T) {
	m := NewMetrics()
	m.CallDone("calc", "add", 0, "")
	m.CallDone("web", "fetch", 0, string(call.KindCancelled))
	m.CallDone("web", "fetch", 0, string(call.KindTimeout))
	served, failed, recent := m.Calls()
	if served != 3 || failed != 1 || m.Cancelled() != 1 {
		t.Errorf("got %d served, %d failed, %d cancelled; want 3, 1, 1", served, failed, m.Cancelled())
	}
	if len(recent) != 1 || recent[0].Kind != string(call.KindTimeout) {
		t.Errorf("recent failures: got %+v, want the timeout alone", recent)
	}
	if calls := m.RecentCalls(); len(calls) != 3 || calls[1].Kind != string(call.KindCancelled) {
		t.Errorf("recent calls: got %+v, want the cancelled call among them", calls)
	}
	var none *Metrics
	if none.Cancelled() != 0 {
		t.Error("a nil *Metrics reports cancelled calls")
	}
}
