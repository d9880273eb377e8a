package proxy

import (
	"fmt"
	"testing"
)

func TestMetricsCallsCountsAndKeepsTheLatestFailures(t *testing.T) {
	m := NewMetrics()
	m.CallDone("calc", "add", 0, "")
	m.CallDone("calc", "add", 0, "")
	m.ToolError("calc", "add")
	for i := range recentFailures + 2 {
		m.CallDone("web", fmt.Sprintf("fetch%d", i), 0, string(KindTimeout))
	}
	served, failed, recent := m.Calls()
	if served != 2+recentFailures+2 || failed != 1+recentFailures+2 {
		t.Errorf("got %d served, %d failed; want %d and %d", served, failed, 2+recentFailures+2, 1+recentFailures+2)
	}
	if len(recent) != recentFailures || recent[0].Tool != "fetch2" || recent[len(recent)-1].Tool != fmt.Sprintf("fetch%d", recentFailures+1) {
		t.Errorf("recent: %+v, want the latest %d, oldest first", recent, recentFailures)
	}
	if recent[0].Kind != string(KindTimeout) || recent[0].Upstream != "web" {
		t.Errorf("recent[0] = %+v", recent[0])
	}
	var none *Metrics
	if s, f, r := none.Calls(); s != 0 || f != 0 || r != nil {
		t.Error("a nil *Metrics reports calls")
	}
}
