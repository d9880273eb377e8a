package proxy

// Routing through an outage: request_more_tools says when what matches a
// request belongs to an upstream that is down or still starting, and a
// detour an outage caused teaches routing nothing.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/mcp-router/mcp-router/routing"
)

// The alert kinds of an outage.
const (
	alertUpstreamDown     = "upstream_down"
	alertUpstreamStarting = "upstream_starting"
)

// outage is one upstream that is not connected, as request_more_tools
// reports it in structuredContent.
type outage struct {
	Upstream string   `json:"upstream"`
	State    string   `json:"state"` // starting or down
	Seconds  int      `json:"seconds"`
	Tools    []string `json:"tools"` // its tools that matched, from its last listing
}

// outages finds, for a discovery, the upstreams not connected whose tools
// were selected (their last listing stays in the catalog while they are
// down), and those never connected in this run whose name or domain the
// query names. The alerts say so to the model; no URL or error text.
func (s *Server) findOutages(d routing.Discovery) ([]outage, []routing.Alert) {
	states := map[string]Status{}
	for _, st := range s.hub.Status() {
		states[st.Name] = st
	}
	var out []outage
	index := map[string]int{}
	note := func(st Status, tool string) {
		i, ok := index[st.Name]
		if !ok {
			i = len(out)
			index[st.Name] = i
			o := outage{Upstream: st.Name, State: "down", Seconds: int(time.Since(st.DownSince).Seconds()), Tools: []string{}}
			if st.Starting {
				o.State, o.Seconds = "starting", int(time.Since(st.Since).Seconds())
			}
			out = append(out, o)
		}
		if tool != "" {
			out[i].Tools = append(out[i].Tools, tool)
		}
	}
	for _, c := range d.Selected {
		if st, ok := states[c.Upstream]; ok && st.State != StateConnected {
			note(st, c.Name)
		}
	}
	words := queryWords(d.Query)
	for _, u := range s.hub.set().list {
		st := states[u.Name()]
		if st.State != StateConnected && !st.EverConnected && (namesAny(words, u.Name()) || namesAny(words, u.Config().EffectiveDomain())) {
			note(st, "")
		}
	}
	alerts := make([]routing.Alert, len(out))
	for i, o := range out {
		alerts[i] = outageAlert(o)
	}
	return out, alerts
}

// unavailable is the outage state of upstream, "" when it is connected.
func unavailable(outs []outage, upstream string) string {
	for _, o := range outs {
		if o.Upstream == upstream {
			return o.State
		}
	}
	return ""
}

func outageAlert(o outage) routing.Alert {
	what := fmt.Sprintf("server %s", o.Upstream)
	if len(o.Tools) > 0 {
		what = fmt.Sprintf("%s (server %s)", strings.Join(o.Tools, ", "), o.Upstream)
	} else {
		what += ", whose name matches this request,"
	}
	if o.State == "starting" {
		return routing.Alert{Kind: alertUpstreamStarting, Tools: o.Tools, Message: fmt.Sprintf(
			"Routing alert: %s is still starting (for %ds). Its tools will be callable in a moment: "+
				"a call waits for it a few seconds, or search again shortly.", what, o.Seconds)}
	}
	return routing.Alert{Kind: alertUpstreamDown, Tools: o.Tools, Message: fmt.Sprintf(
		"Routing alert: %s is down (for %ds); the gateway keeps retrying it. Calls to its tools fail until it is back: "+
			"tell the user this capability is unavailable right now rather than using an unrelated tool.", what, o.Seconds)}
}

// queryWords are a query's words of three letters or more, lower case.
func queryWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) >= 3 {
			out = append(out, w)
		}
	}
	return out
}

// namesAny reports whether a word of the query names an upstream (or its
// domain): equal to a part of the name, or a stem of four letters or more
// of one ("file" for "filesystem", "github" for "github-enterprise").
func namesAny(words []string, name string) bool {
	for _, part := range queryWords(name) {
		for _, w := range words {
			if w == part || len(w) >= 4 && strings.HasPrefix(part, w) || len(part) >= 4 && strings.HasPrefix(w, part) {
				return true
			}
		}
	}
	return false
}

// withOutages puts the outage alerts in a discovery's alerts: an outage
// replaces the router's "no match", which would tell the model that
// nothing serves the request when something does but is down.
func withOutages(alerts, outageAlerts []routing.Alert) []routing.Alert {
	if len(outageAlerts) == 0 {
		return alerts
	}
	out := make([]routing.Alert, 0, len(alerts)+len(outageAlerts))
	out = append(out, outageAlerts...)
	for _, a := range alerts {
		if a.Kind != "no_match" {
			out = append(out, a)
		}
	}
	return out
}

// outageSeen remembers, per session, that the current search met an
// outage (an alert, or a call that failed because its upstream was not
// there): the detour that follows is the outage's doing, not routing's,
// and is not learned.
type outageSeen struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (o *outageSeen) note(ctx context.Context) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ids == nil {
		o.ids = map[string]bool{}
	}
	o.ids[sessionID(ctx)] = true
}

// take reports whether ctx's session met an outage since the last call
// that succeeded, and forgets it.
func (o *outageSeen) take(ctx context.Context) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	id := sessionID(ctx)
	seen := o.ids[id]
	delete(o.ids, id)
	return seen
}

func (o *outageSeen) forget(id string) {
	o.mu.Lock()
	delete(o.ids, id)
	o.mu.Unlock()
}

// isOutage reports a call that failed because its upstream was not there.
func isOutage(k Kind) bool {
	return k == KindUnavailable || k == KindStarting || k == KindCircuitOpen
}
