package metatools

// Routing through an outage: request_more_tools says when a match belongs
// to an upstream down or starting, and such a detour teaches nothing.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
)

// The alert kinds of an outage.
const (
	alertUpstreamDown        = "upstream_down"
	alertUpstreamStarting    = "upstream_starting"
	alertUpstreamUnavailable = "upstream_unavailable"
)

// The states of an outage.
const (
	stateDown     = "down"
	stateStarting = "starting"
	stateDisabled = "disabled"
)

// outage is one upstream not connected, in request_more_tools' result.
type outage struct {
	Upstream string   `json:"upstream"`
	State    string   `json:"state"` // starting, down or disabled
	Seconds  int      `json:"seconds"`
	Tools    []string `json:"tools"`            // its tools that matched, from its last listing
	Reason   string   `json:"reason,omitempty"` // why a disabled upstream is off
	// named: the query names the upstream or domain, or its description.
	named bool
	// never: it never connected in this run, so its tools are unknown.
	never  bool
	about  string // what the upstream is for, as configured
	domain string // its domain, as configured (its name by default)
}

// findOutages finds the upstreams not connected whose tools were
// selected, those still starting (their tools could not be ranked), those
// never connected that req names (see [namedBy]), or any when the discovery
// d selected nothing (their tools are unknown, so "nothing serves this"
// would be a guess), and the disabled ones req names. The alerts carry no
// URL or error text.
func findOutages(ups []Upstream, req routing.Request, d routing.Discovery) ([]outage, []routing.Alert) {
	if allConnected(ups) {
		return nil, nil
	}
	var l outageList
	l.selected(ups, d.Selected)
	l.neverConnected(ups, req, d.Abstained || len(d.Selected) == 0)
	var disabled []Upstream
	for _, u := range ups {
		if u.Disabled {
			disabled = append(disabled, u)
		}
	}
	named := namedBy(disabled, req)
	for _, u := range disabled {
		if named[u.Name] {
			l.out = append(l.out, outage{Upstream: u.Name, State: stateDisabled, Tools: []string{}, Reason: u.Reason})
		}
	}
	return l.out, outageAlerts(l.out)
}

// outageAlerts is one alert per outage, but one for all the upstreams
// merely starting (no tool of theirs matched, the query names none), at
// the first one's place: a cold start is one paragraph, not one a server.
func outageAlerts(outs []outage) []routing.Alert {
	alerts := make([]routing.Alert, 0, len(outs))
	var starting []outage
	at := 0
	for _, o := range outs {
		if o.State != stateStarting || len(o.Tools) > 0 || o.named {
			alerts = append(alerts, outageAlert(o))
			continue
		}
		if starting == nil {
			at = len(alerts)
		}
		starting = append(starting, o)
	}
	if starting == nil {
		return alerts
	}
	return slices.Insert(alerts, at, startingAlert(starting))
}

// startingAlert says that the upstreams outs are starting, each with what
// it is for and for how long.
func startingAlert(outs []outage) routing.Alert {
	const rest = ": %s tools are not listed yet, so this search could not rank them. If no tool here fits, search again in a moment."
	if len(outs) == 1 {
		o := outs[0]
		return routing.Alert{Kind: alertUpstreamStarting, Tools: o.Tools, Message: fmt.Sprintf(
			"Routing alert: server %s%s is still starting (for %ds)"+rest, o.Upstream, aboutStarting(o.about), o.Seconds, "its")}
	}
	names := make([]string, len(outs))
	for i, o := range outs {
		what := fmt.Sprintf("for %ds", o.Seconds)
		if o.about != "" {
			what = clip.Ellipsis(clip.OneLine(o.about), maxSignatureServer) + ", " + what
		}
		names[i] = fmt.Sprintf("%s (%s)", o.Upstream, what)
	}
	return routing.Alert{Kind: alertUpstreamStarting, Tools: []string{}, Message: fmt.Sprintf(
		"Routing alert: servers %s are still starting"+rest, strings.Join(names, ", "), "their")}
}

// allConnected reports that every upstream is connected and none is
// disabled: then no discovery meets an outage.
func allConnected(ups []Upstream) bool {
	for _, u := range ups {
		if !u.Connected || u.Disabled {
			return false
		}
	}
	return true
}

// selected notes the selected tools of upstreams not connected. Only those
// are indexed: the catalog may hold hundreds of upstreams, a call selects
// a handful of tools.
func (l *outageList) selected(ups []Upstream, selected []routing.Candidate) {
	var down map[string]Upstream
	for _, u := range ups {
		if !u.Connected && !u.Disabled {
			if down == nil {
				down = map[string]Upstream{}
			}
			down[u.Name] = u
		}
	}
	for _, c := range selected {
		if u, ok := down[c.Upstream]; ok {
			l.note(u, c.Name)
		}
	}
}

// neverConnected notes the upstreams never connected that are starting,
// that req names (their description is the only evidence of their tools),
// or all of them when the discovery abstained.
func (l *outageList) neverConnected(ups []Upstream, req routing.Request, abstained bool) {
	var never []Upstream
	for _, u := range ups {
		if !u.Disabled && !u.Connected && !u.EverConnected {
			never = append(never, u)
		}
	}
	if len(never) == 0 {
		return
	}
	named := namedBy(never, req)
	for _, u := range never {
		if named[u.Name] || u.Starting || abstained {
			i := l.note(u, "")
			l.out[i].named, l.out[i].never, l.out[i].about, l.out[i].domain = named[u.Name], true, u.About, u.Domain
		}
	}
}

// outageList is the outages of a discovery, one per upstream.
type outageList struct{ out []outage }

// note adds tool ("" for none) to u's outage and returns its index.
func (l *outageList) note(u Upstream, tool string) int {
	i := slices.IndexFunc(l.out, func(o outage) bool { return o.Upstream == u.Name })
	if i < 0 {
		i = len(l.out)
		o := outage{Upstream: u.Name, State: stateDown, Seconds: int(time.Since(u.DownSince).Seconds()), Tools: []string{}}
		if u.Starting {
			o.State, o.Seconds = stateStarting, int(time.Since(u.Since).Seconds())
		}
		l.out = append(l.out, o)
	}
	if tool != "" {
		l.out[i].Tools = append(l.out[i].Tools, tool)
	}
	return i
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
	switch {
	case len(o.Tools) > 0:
		what = fmt.Sprintf("%s (server %s)", strings.Join(o.Tools, ", "), o.Upstream)
	case o.named:
		what += ", which this request names or its description matches,"
	}
	if o.State == stateDisabled {
		return routing.Alert{Kind: alertUpstreamUnavailable, Tools: o.Tools, Message: fmt.Sprintf(
			"Routing alert: server %s, which may serve this request, is unavailable: the gateway left it out at start because its configuration is unusable (%s). "+
				"Tell the user this capability needs that fixed (`mcp-router doctor` says how) rather than using an unrelated tool.",
			o.Upstream, o.Reason)}
	}
	if o.State == stateDown && o.never && !o.named && len(o.Tools) == 0 {
		return routing.Alert{Kind: alertUpstreamDown, Tools: o.Tools, Message: fmt.Sprintf(
			"Routing alert: server %s%s never connected (down for %ds; the gateway keeps retrying it), so its tools are unknown: it may serve this request. "+
				"Tell the user it is not connected and that `mcp-router doctor` says why, rather than that this capability is missing.",
			o.Upstream, aboutStarting(o.about), o.Seconds)}
	}
	if o.State == stateStarting {
		return routing.Alert{Kind: alertUpstreamStarting, Tools: o.Tools, Message: fmt.Sprintf(
			"Routing alert: %s is still starting (for %ds). Its tools will be callable in a moment: "+
				"a call to one of them waits while it starts, or search again shortly.", what, o.Seconds)}
	}
	return routing.Alert{Kind: alertUpstreamDown, Tools: o.Tools, Message: fmt.Sprintf(
		"Routing alert: %s is down (for %ds); the gateway keeps retrying it. Calls to its tools fail until it is back: "+
			"tell the user this capability is unavailable right now rather than using an unrelated tool.", what, o.Seconds)}
}

// aboutStarting is " (<description>)" for a starting upstream with one.
func aboutStarting(desc string) string {
	if desc == "" {
		return ""
	}
	return " (" + clip.Ellipsis(clip.OneLine(desc), maxSignatureServer) + ")"
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

// namesAny reports whether a query word names an upstream (or domain):
// equal to a part of the name, or a stem of four letters or more of one.
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

// standIns scores down by penalty the tools from other domains than an
// unconnected upstream the request names: they stand in for its tools,
// which could not be ranked.
func standIns(tools []routedTool, outs []outage, penalty float64) {
	domains := outageDomains(outs)
	for i := range tools {
		if len(domains) > 0 && !slices.Contains(domains, tools[i].Domain) {
			tools[i].Score = round2(tools[i].Score * penalty)
		}
	}
}

// outageDomains is the domains of the outages the request names.
func outageDomains(outs []outage) []string {
	var domains []string
	for _, o := range outs {
		if o.named {
			domains = append(domains, o.domain)
		}
	}
	return domains
}

// Outages is d as request_more_tools would present it with ups: outage
// alerts first, stand-ins scored down by penalty. It is for `mcp-router
// route`, which ranks without a session.
func Outages(ups []Upstream, d routing.Decision, penalty float64) routing.Decision {
	outs, alerts := findOutages(ups, routing.Request{Query: d.Query}, routing.Discovery{Decision: d})
	d.Alerts = withOutages(d.Alerts, alerts)
	domains := outageDomains(outs)
	if len(domains) == 0 {
		return d
	}
	d.Ranked, d.Selected = slices.Clone(d.Ranked), slices.Clone(d.Selected)
	for _, cs := range [][]routing.Candidate{d.Ranked, d.Selected} {
		for i := range cs {
			if !slices.Contains(domains, cs[i].Domain) {
				cs[i].Score *= penalty
			}
		}
	}
	return d
}

// withOutages puts the outage alerts first, dropping "no match", which
// would say nothing serves the request when something is down.
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

// awaitStarting waits, up to the start wait, for the starting upstreams
// of ups that may serve req (or all of them when the connected tools
// serve none), so that an early discovery ranks their tools. It reports
// whether it waited.
func (t *Tools) awaitStarting(ctx context.Context, c *call.Call, sess *routing.Session, req routing.Request, ups []Upstream) bool {
	var starting []Upstream
	for _, u := range ups {
		if u.Starting && !u.Disabled {
			starting = append(starting, u)
		}
	}
	if len(starting) == 0 {
		return false
	}
	wait := mayServe(starting, req, t.opts.Upstreams.PendingOwner)
	if len(wait) < len(starting) {
		if d := sess.Preview(ctx, req); d.Abstained || len(d.Selected) == 0 {
			wait = make([]string, len(starting))
			for i, u := range starting {
				wait[i] = u.Name
			}
		}
	}
	if len(wait) > 0 {
		t.opts.Logger.Debug("discovery waits for starting upstreams", "session_id", call.SessionTag(c.Session), "upstreams", len(wait))
		t.opts.Upstreams.AwaitStarted(ctx, wait)
		t.opts.Starts.Settle() // what they brought is indexed before the discovery ranks it
	}
	return len(wait) > 0
}

// mayServe is the starting upstreams req may be for: it needs their
// tools, or it names them (see [namedBy]).
func mayServe(starting []Upstream, req routing.Request, owner func(string) string) []string {
	picked := namedBy(starting, req)
	for _, n := range req.Needs {
		if u := owner(n); u != "" {
			picked[u] = true
		}
	}
	var out []string
	for _, u := range starting {
		if picked[u.Name] {
			out = append(out, u.Name)
		}
	}
	return out
}

// namedBy is the upstreams of ups that req names, the one rule for
// whether a request is for an upstream: a word of its query, keywords or
// intent names the upstream or its domain (see [namesAny]), or the words
// match its description as the router scores a tool.
func namedBy(ups []Upstream, req routing.Request) map[string]bool {
	text := strings.Join([]string{req.Query, req.Keywords, req.Intent}, " ")
	words := queryWords(text)
	named := map[string]bool{}
	for _, u := range ups {
		if namesAny(words, u.Name) || namesAny(words, u.Domain) {
			named[u.Name] = true
		}
	}
	for _, name := range describedBy(ups, text) {
		named[name] = true
	}
	return named
}

// describedBy is the upstreams whose description matches text, scored as the router scores a tool.
func describedBy(ups []Upstream, text string) []string {
	var docs []routing.Tool
	for _, u := range ups {
		if u.About != "" {
			docs = append(docs, routing.Tool{Name: u.Name, Upstream: u.Name, Domain: u.Domain, Description: u.About})
		}
	}
	if len(docs) == 0 {
		return nil
	}
	ix := routing.NewIndex(routing.IndexOptions{})
	ix.SetUpstream("starting", docs)
	var out []string
	for _, h := range ix.Search(text, 0) {
		if h.Score >= routing.DefaultThreshold {
			out = append(out, h.Name)
		}
	}
	return out
}
