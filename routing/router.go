package routing

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-router/mcp-router/routing/fuse"
)

// RouterOptions configures a Router (seed 002, tiers 1 and 2). Zero values
// take the defaults in brackets.
type RouterOptions struct {
	// TopK tools are kept whatever their score, above the noise floor
	// (Fuse.MinQRScore) [5].
	TopK int
	// Threshold keeps any tool scoring at least this much, beyond TopK [0.35].
	Threshold float64
	// SameDomain and CrossDomain multiply scores when the session has a
	// domain context [1.15, 0.7].
	SameDomain, CrossDomain float64
	// CollisionDelta: top-1 and top-2 from different domains within this
	// score of each other raise a routing alert [0.08].
	CollisionDelta float64
	// DiscoveryPrefixes mark an upstream's discovery tools, loaded along
	// with any of its tools that is selected [get_, list_, search_].
	// An empty, non-nil slice turns boundary loading off.
	DiscoveryPrefixes []string
	// Fuse merges the model's stated needs with the ranked candidates
	// [DefaultFusePolicy].
	Fuse *fuse.Policy
	// Lexical is the lexical index; nil makes a new one.
	Lexical *Index
	// Semantic, when set, adds embedding scores, fused with weight
	// SemanticWeight [0.5].
	Semantic       *SemanticIndex
	SemanticWeight float64
	// Lessons, when set, re-scores the ranked candidates with what
	// routing learned from detours and feedback (package routing/lessons).
	Lessons Reranker
	// Logger receives warnings; with Wire, each decision at debug level.
	Logger *slog.Logger
	Wire   bool
	// Trace, when set, receives each decision as a line of JSON (for
	// offline analysis); writes are serialised.
	Trace io.Writer
}

// Reranker adjusts the scores of ranked tools for a query, by experience.
// It only changes tools already ranked: a lesson never brings in a tool the
// query did not find.
type Reranker interface {
	Rerank(ctx context.Context, query string, hits []Hit) []Hit
}

// Defaults for RouterOptions.
const (
	DefaultTopK           = 5
	DefaultThreshold      = 0.35
	DefaultSameDomain     = 1.15
	DefaultCrossDomain    = 0.7
	DefaultCollisionDelta = 0.08
	// boundaryPerUpstream caps the discovery tools one selected upstream brings.
	boundaryPerUpstream = 2
	// candidatePool is how deep the ranking is read before selection.
	candidatePool = 50
	// instancesPool is how many times deeper it is read when instances of
	// one server are collapsed.
	instancesPool = 4
)

// DefaultNoiseFloor is the router's min_qr_score: the router already keeps
// anything at or above its threshold (0.35, the seed's typical
// min_qr_score), so the fuse floor only stops its top-k from padding the
// belt with tools that barely match.
const DefaultNoiseFloor = 0.2

// DefaultFusePolicy is the seed's fuse policy with the router's noise floor.
func DefaultFusePolicy() fuse.Policy {
	p := fuse.DefaultPolicy()
	p.MinQRScore = DefaultNoiseFloor
	return p
}

// DefaultDiscoveryPrefixes are the seed's discovery-tool prefixes.
var DefaultDiscoveryPrefixes = []string{"get_", "list_", "search_"}

func (o *RouterOptions) defaults() {
	if o.TopK <= 0 {
		o.TopK = DefaultTopK
	}
	if o.Threshold <= 0 {
		o.Threshold = DefaultThreshold
	}
	if o.SameDomain <= 0 {
		o.SameDomain = DefaultSameDomain
	}
	if o.CrossDomain <= 0 {
		o.CrossDomain = DefaultCrossDomain
	}
	if o.CollisionDelta <= 0 {
		o.CollisionDelta = DefaultCollisionDelta
	}
	if o.DiscoveryPrefixes == nil {
		o.DiscoveryPrefixes = DefaultDiscoveryPrefixes
	}
	if o.Fuse == nil {
		p := DefaultFusePolicy()
		o.Fuse = &p
	}
	if o.Lexical == nil {
		o.Lexical = NewIndex(IndexOptions{})
	}
	if o.SemanticWeight <= 0 {
		o.SemanticWeight = 0.5
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Router ranks the catalog for a request and decides which tools to hand
// over: affinity, selection, fusion with stated needs, boundary loading and
// collision alerts. It holds no per-session state (see Session) and is safe
// for concurrent use.
type Router struct {
	opts    RouterOptions
	traceMu sync.Mutex

	mu        sync.Mutex
	discovery map[string][]string // upstream -> its discovery tools' names
	known     map[string]Tool
	copies    map[[2]string]int // own name and contract -> tools with them
	shared    int               // entries of copies above one
}

// NewRouter returns a Router with an empty catalog. It does no I/O.
func NewRouter(opts RouterOptions) *Router {
	opts.defaults()
	return &Router{opts: opts, discovery: map[string][]string{}, known: map[string]Tool{}, copies: map[[2]string]int{}}
}

// Options returns the options in force, defaults applied.
func (r *Router) Options() RouterOptions { return r.opts }

// SetUpstream replaces one upstream's tools in the lexical index and the
// router's catalog; nil removes the upstream. It is fast and does no I/O:
// embeddings, when on, are updated apart by Embed.
func (r *Router) SetUpstream(upstream string, tools []Tool) {
	r.opts.Lexical.SetUpstream(upstream, tools)
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, t := range r.known {
		if t.Upstream == upstream {
			delete(r.known, name)
			r.count(t, -1)
		}
	}
	var disc []string
	for _, t := range tools {
		if old, ok := r.known[t.Name]; ok {
			r.count(old, -1) // another upstream's, replaced as in the index
		}
		r.known[t.Name] = t
		r.count(t, +1)
		if r.isDiscovery(t) {
			disc = append(disc, t.Name)
		}
	}
	r.discovery[upstream] = disc
}

// count adds delta to the copies of t's own name and contract, and keeps
// shared (how many of them several upstreams expose) in step.
func (r *Router) count(t Tool, delta int) {
	if t.Contract == "" {
		return
	}
	key := [2]string{cmp.Or(t.Original, t.Name), t.Contract}
	before := r.copies[key]
	after := before + delta
	if after <= 0 {
		delete(r.copies, key)
	} else {
		r.copies[key] = after
	}
	switch {
	case before <= 1 && after > 1:
		r.shared++
	case before > 1 && after <= 1:
		r.shared--
	}
}

// hasInstances reports whether some tool is exposed by several instances
// of one server.
func (r *Router) hasInstances() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shared > 0
}

// Semantic reports whether embeddings are configured.
func (r *Router) Semantic() bool { return r.opts.Semantic != nil }

// Embed updates one upstream's tool embeddings (a no-op without
// embeddings). On failure the semantic index keeps its previous vectors
// and routing stays lexical for what is missing; the error says why.
func (r *Router) Embed(ctx context.Context, upstream string, tools []Tool) error {
	if r.opts.Semantic == nil {
		return nil
	}
	return r.opts.Semantic.SetUpstream(ctx, upstream, tools)
}

func (r *Router) isDiscovery(t Tool) bool {
	name := t.Original
	if name == "" {
		name = t.Name
	}
	for _, p := range r.opts.DiscoveryPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Tool returns a catalog tool by exposed name.
func (r *Router) Tool(name string) (Tool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.known[name]
	return t, ok
}

// Rank returns the catalog ranked for query with calibrated scores, best
// first, lexical and (when available) semantic fused; k <= 0 is every tool
// with a score. It applies no session context.
func (r *Router) Rank(ctx context.Context, query string, k int) []Hit {
	if r.opts.Semantic == nil {
		return r.opts.Lexical.Search(query, k)
	}
	// Fusion reads both full lists, so that a tool missing from one
	// really is unrelated there.
	sem, err := r.opts.Semantic.Search(ctx, query, 0)
	if err != nil {
		return r.opts.Lexical.Search(query, k) // the semantic index warned once
	}
	return head(FuseHits(r.opts.Lexical.Search(query, 0), sem, r.opts.SemanticWeight), k)
}

// SyncEmbeddings retries the upstreams whose embedding failed (a no-op
// when none did, or without embeddings).
func (r *Router) SyncEmbeddings(ctx context.Context) error {
	if r.opts.Semantic == nil {
		return nil
	}
	return r.opts.Semantic.Sync(ctx)
}

func head(hits []Hit, k int) []Hit {
	if k > 0 && len(hits) > k {
		return hits[:k]
	}
	return hits
}

// Request is one routing question.
type Request struct {
	// Query is what the tools are for, in words.
	Query string
	// Needs are tools the model believes it needs, by exposed name.
	Needs []string
	// Route is the kind of turn, when the caller knows it.
	Route fuse.Route
	// Domains is the session's domain context; empty means none, and no
	// affinity is applied.
	Domains []string
	// Exclude names tools never to select (the proxy's own).
	Exclude func(name string) bool
}

// Candidate is one ranked tool.
type Candidate struct {
	Name     string  `json:"name"`
	Upstream string  `json:"upstream"`
	Domain   string  `json:"domain"`
	Score    float64 `json:"score"`     // after affinity, in [0, 1]
	RawScore float64 `json:"raw_score"` // calibrated, before affinity
	// Multiplier is the affinity applied (1 without context).
	Multiplier float64 `json:"multiplier"`
	// Lesson is what learned lessons added to RawScore (negative: took away).
	Lesson float64 `json:"lesson,omitempty"`
	// Alternatives are the same tool on other instances of its server,
	// ranked lower and left out of the ranking for it, best first.
	Alternatives []string `json:"alternatives,omitempty"`
	adjusted     float64  // unclipped, for ordering
	// runnerUp is the best of the alternatives, for the collision alert.
	runnerUp *Candidate
}

// Alert is something the model should know before calling a routed tool.
type Alert struct {
	Kind    string   `json:"kind"` // "collision", "breaker", "no_match"
	Tools   []string `json:"tools,omitempty"`
	Domains []string `json:"domains,omitempty"`
	Message string   `json:"message"`
}

// Decision is the Router's answer to a Request.
type Decision struct {
	Query string
	// Ranked are the candidates considered, best first, after affinity.
	Ranked []Candidate
	// Selected are the tools to hand over, in belt order: fused with the
	// needs, then the selected upstreams' discovery tools.
	Selected []Candidate
	// Boundary are the names Selected gained by boundary loading.
	Boundary []string
	// Unknown are stated needs that are not in the catalog.
	Unknown []string
	Alerts  []Alert
	// Affinity tells whether domain multipliers were applied.
	Affinity bool
	Dropped  []fuse.Drop
	Took     time.Duration
}

// Route answers one request. It never fails: with nothing relevant, the
// selection is empty and an alert says so.
func (r *Router) Route(ctx context.Context, req Request) Decision {
	start := time.Now()
	d := Decision{Query: req.Query, Affinity: len(req.Domains) > 0}
	if strings.TrimSpace(req.Query) != "" {
		if r.opts.Fuse.CollapseDuplicates && r.hasInstances() {
			// Read deeper: instances of one server fill the ranking with
			// copies of each tool, which collapse to one.
			d.Ranked = r.collapseInstances(r.rank(ctx, req, instancesPool*candidatePool))
			d.Ranked = d.Ranked[:min(len(d.Ranked), candidatePool)]
		} else {
			d.Ranked = r.rank(ctx, req, candidatePool)
		}
	}
	selected := r.preselect(d.Ranked)
	res := fuse.Fuse(*r.opts.Fuse, fuse.Input{
		Route:      req.Route,
		Needs:      req.Needs,
		Candidates: selected,
		Known:      func(name string) bool { _, ok := r.Tool(name); return ok && (req.Exclude == nil || !req.Exclude(name)) },
	})
	d.Unknown, d.Dropped = res.Unknown, res.Dropped
	d.Selected = r.candidates(res.Tools, d.Ranked)
	d.Boundary = r.boundary(&d, req)
	d.Alerts = r.alerts(d)
	d.Took = time.Since(start)
	r.trace(req, d)
	return d
}

// rank scores the catalog and applies domain affinity.
func (r *Router) rank(ctx context.Context, req Request, pool int) []Candidate {
	hits := r.Rank(ctx, req.Query, pool)
	var before map[string]float64
	if r.opts.Lessons != nil {
		before = make(map[string]float64, len(hits))
		for _, h := range hits {
			before[h.Name] = h.Score
		}
		hits = r.opts.Lessons.Rerank(ctx, req.Query, hits)
	}
	out := make([]Candidate, 0, len(hits))
	for _, h := range hits {
		t, ok := r.Tool(h.Name)
		if !ok || (req.Exclude != nil && req.Exclude(h.Name)) {
			continue
		}
		c := Candidate{Name: h.Name, Upstream: t.Upstream, Domain: domainOf(t), RawScore: h.Score, Multiplier: 1}
		if b, ok := before[h.Name]; ok {
			c.Lesson = h.Score - b
		}
		if len(req.Domains) > 0 {
			c.Multiplier = r.opts.CrossDomain
			if slices.Contains(req.Domains, c.Domain) {
				c.Multiplier = r.opts.SameDomain
			}
		}
		c.adjusted = c.RawScore * c.Multiplier
		c.Score = math.Min(1, c.adjusted)
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b Candidate) int { return cmp.Compare(b.adjusted, a.adjusted) })
	return out
}

// collapseInstances keeps, of the ranked tools that several instances of
// one server expose (same own name and contract), the best-ranked one,
// and lists the others as its alternatives: ten folders served by one
// filesystem server offer one read_file, not ten identical ones. The
// ranking decides which instance is kept, so an upstream's configured
// description can.
func (r *Router) collapseInstances(ranked []Candidate) []Candidate {
	kept := map[[2]string]int{} // own name and contract -> index in out
	out := ranked[:0:0]
	for _, c := range ranked {
		t, _ := r.Tool(c.Name)
		if t.Contract == "" {
			out = append(out, c)
			continue
		}
		own := t.Original
		if own == "" {
			own = t.Name
		}
		key := [2]string{own, t.Contract}
		if i, ok := kept[key]; ok {
			if out[i].runnerUp == nil {
				out[i].runnerUp = &c
			}
			out[i].Alternatives = append(out[i].Alternatives, c.Name)
			continue
		}
		kept[key] = len(out)
		out = append(out, c)
	}
	return out
}

func domainOf(t Tool) string {
	if t.Domain != "" {
		return t.Domain
	}
	return t.Upstream
}

// preselect keeps the top k and anything at or above the threshold; the
// fuse policy's noise floor (min_qr_score) then drops what is too weak to
// offer at all.
func (r *Router) preselect(ranked []Candidate) []fuse.Candidate {
	var out []fuse.Candidate
	for i, c := range ranked {
		if i < r.opts.TopK || c.Score >= r.opts.Threshold {
			out = append(out, fuse.Candidate{Tool: c.Name, Score: c.Score})
		}
	}
	return out
}

// candidates looks the fused names up in the ranking (needs that were not
// ranked get a zero score).
func (r *Router) candidates(names []string, ranked []Candidate) []Candidate {
	out := make([]Candidate, 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(ranked, func(c Candidate) bool { return c.Name == name })
		if i >= 0 {
			out = append(out, ranked[i])
			continue
		}
		t, _ := r.Tool(name)
		out = append(out, Candidate{Name: name, Upstream: t.Upstream, Domain: domainOf(t), Multiplier: 1})
	}
	return out
}

// boundary adds, for each upstream with a selected tool, its discovery
// tools (best ranked first, at most boundaryPerUpstream each) within the
// fuse cap, and returns the names added.
func (r *Router) boundary(d *Decision, req Request) []string {
	if len(d.Selected) == 0 || len(r.opts.DiscoveryPrefixes) == 0 {
		return nil
	}
	have := map[string]bool{}
	var upstreams []string
	for _, c := range d.Selected {
		have[c.Name] = true
		if !slices.Contains(upstreams, c.Upstream) {
			upstreams = append(upstreams, c.Upstream)
		}
	}
	var added []string
	for _, up := range upstreams {
		r.mu.Lock()
		disc := slices.Clone(r.discovery[up])
		r.mu.Unlock()
		slices.SortStableFunc(disc, func(a, b string) int { return cmp.Compare(rankOf(d.Ranked, a), rankOf(d.Ranked, b)) })
		n := 0
		for _, name := range disc {
			if len(d.Selected) >= r.opts.Fuse.MaxTools || n == boundaryPerUpstream {
				break
			}
			if have[name] || (req.Exclude != nil && req.Exclude(name)) {
				continue
			}
			have[name] = true
			d.Selected = append(d.Selected, r.candidates([]string{name}, d.Ranked)...)
			added = append(added, name)
			n++
		}
	}
	return added
}

func rankOf(ranked []Candidate, name string) int {
	if i := slices.IndexFunc(ranked, func(c Candidate) bool { return c.Name == name }); i >= 0 {
		return i
	}
	return math.MaxInt
}

// alerts raises the collision alert (top-1 and top-2 from different
// domains, close in score) and the no-match alert.
func (r *Router) alerts(d Decision) []Alert {
	var out []Alert
	if a, b, ok := topTwo(d.Ranked); ok {
		if a.Domain != b.Domain && a.Score-b.Score < r.opts.CollisionDelta && b.Score >= r.opts.Fuse.MinQRScore {
			out = append(out, Alert{
				Kind: "collision", Tools: []string{a.Name, b.Name}, Domains: []string{a.Domain, b.Domain},
				Message: fmt.Sprintf("Routing alert: %s (domain %s, score %.2f) and %s (domain %s, score %.2f) match this request almost equally. "+
					"Check which domain the user means before calling either; a shared keyword is not a shared intent.",
					a.Name, a.Domain, a.Score, b.Name, b.Domain, b.Score),
			})
		}
	}
	if len(d.Selected) == 0 && d.Query != "" {
		msg := fmt.Sprintf("No tool in the catalog matches %q well.", d.Query)
		if len(d.Ranked) > 0 {
			msg += fmt.Sprintf(" The closest is %s (score %.2f), probably not what is needed.", d.Ranked[0].Name, d.Ranked[0].Score)
		}
		msg += " Say so to the user rather than using an unrelated tool, or ask again in other words."
		out = append(out, Alert{Kind: "no_match", Message: msg})
	}
	return out
}

// topTwo are the best two candidates, counting the best alternative of
// the first (the same tool on another instance of its server, which may
// be as likely to be the one meant).
func topTwo(ranked []Candidate) (a, b Candidate, ok bool) {
	if len(ranked) == 0 {
		return a, b, false
	}
	a = ranked[0]
	switch {
	case a.runnerUp != nil && (len(ranked) < 2 || a.runnerUp.adjusted >= ranked[1].adjusted):
		return a, *a.runnerUp, true
	case len(ranked) >= 2:
		return a, ranked[1], true
	}
	return a, b, false
}

// trace logs the decision at debug level when wire logging is on, and
// writes it to the trace file when there is one.
func (r *Router) trace(req Request, d Decision) {
	if r.opts.Trace != nil {
		r.writeTrace(req, d)
	}
	if !r.opts.Wire {
		return
	}
	top := hitsOf(d.Ranked[:min(5, len(d.Ranked))])
	r.opts.Logger.Debug("routing decision", "query", req.Query, "needs", req.Needs, "route", req.Route,
		"domains", req.Domains, "affinity", d.Affinity, "top", top, "selected", names(d.Selected),
		"boundary", d.Boundary, "unknown", d.Unknown, "alerts", len(d.Alerts), "dur", d.Took)
	for _, c := range d.Ranked {
		if c.Lesson != 0 {
			r.opts.Logger.Debug("routing lesson applied", "tool", c.Name, "delta", c.Lesson)
		}
	}
	for _, a := range d.Alerts {
		r.opts.Logger.Debug("routing alert", "kind", a.Kind, "tools", a.Tools, "domains", a.Domains)
	}
}

// traceRecord is one line of the trace file.
type traceRecord struct {
	Time      time.Time   `json:"time"`
	Query     string      `json:"query"`
	Needs     []string    `json:"needs,omitempty"`
	Route     fuse.Route  `json:"route,omitempty"`
	Domains   []string    `json:"domains,omitempty"`
	Affinity  bool        `json:"affinity"`
	Top       []Candidate `json:"top"`
	Selected  []string    `json:"selected"`
	Boundary  []string    `json:"boundary,omitempty"`
	Unknown   []string    `json:"unknown,omitempty"`
	Alerts    []Alert     `json:"alerts,omitempty"`
	Lessons   []string    `json:"lessons,omitempty"` // tools whose score lessons changed
	TookMicro int64       `json:"took_us"`
}

func (r *Router) writeTrace(req Request, d Decision) {
	rec := traceRecord{Time: time.Now().UTC(), Query: req.Query, Needs: req.Needs, Route: req.Route, Domains: req.Domains,
		Affinity: d.Affinity, Top: d.Ranked[:min(10, len(d.Ranked))], Selected: names(d.Selected), Boundary: d.Boundary,
		Unknown: d.Unknown, Alerts: d.Alerts, TookMicro: d.Took.Microseconds()}
	for _, c := range d.Ranked {
		if c.Lesson != 0 {
			rec.Lessons = append(rec.Lessons, c.Name)
		}
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return
	}
	r.traceMu.Lock()
	defer r.traceMu.Unlock()
	if _, err := r.opts.Trace.Write(append(line, '\n')); err != nil {
		r.opts.Logger.Warn("writing the routing trace", "err", err)
	}
}

func hitsOf(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s raw=%.3f x%.2f=%.3f", c.Name, c.RawScore, c.Multiplier, c.Score)
	}
	return out
}

func names(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}
