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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/routing/fuse"
)

// RouterOptions configures a Router (routing tiers 1 and 2 in
// docs/design.md). Zero values take the defaults in brackets; a negative
// value means zero, for the options where zero means something (TopK,
// Threshold, CollisionDelta, the coverages, SemanticWeight), and the
// default for the multipliers SameDomain and CrossDomain.
type RouterOptions struct {
	// TopK tools are kept whatever their score, above the noise floor, plus
	// one per further clause of the request, within max_tools [5].
	TopK      int
	Threshold float64 // keeps any tool scoring at least this much, beyond TopK [0.35]
	// SameDomain and CrossDomain multiply scores when the session has a
	// domain context [1.15, 0.7].
	SameDomain, CrossDomain float64
	// CollisionDelta: top-1 and top-2 from different domains within this
	// score of each other raise a routing alert [0.08].
	CollisionDelta float64
	// DiscoveryPrefixes mark an upstream's discovery tools, loaded with any
	// of its selected tools [get_, list_, search_]; empty, non-nil: none.
	DiscoveryPrefixes []string
	// AbstainCoverage: when no top-TopK tool matches this share of the
	// request (calibrate.go), the router abstains [0.10].
	AbstainCoverage float64
	// AbstainCommitment: the router also abstains when the top tool's
	// coverage c is under 0.4 and c·q² is under this value, q being the
	// ranking's commitment (commitment.go) [0.002]; only with AbstainCoverage.
	AbstainCommitment float64
	// AbstainAdvice: the router also abstains when the request asks for
	// advice or an errand about two nouns the catalog does not know and no
	// top-TopK tool matches this share of it (advice.go) [1]; only with
	// AbstainCoverage. Neither it nor the commitment check applies when
	// the top tool is named for what the request asks about (named.go).
	AbstainAdvice float64
	// KeepCoverage: a top-TopK tool matching this share of the request (or
	// a clause) is handed over under the noise floor, with those above [0.10].
	KeepCoverage float64
	// Fuse merges the model's stated needs with the ranked candidates
	// [DefaultFusePolicy].
	Fuse    *fuse.Policy
	Lexical *Index // the lexical index; nil makes a new one
	// Semantic, when set, adds embedding scores, fused with weight
	// SemanticWeight [0.5]; negative: the lexical score alone.
	Semantic       *SemanticIndex
	SemanticWeight float64
	Lessons        Reranker     // when set, re-scores the candidates (routing/lessons)
	Logger         *slog.Logger // receives warnings; with Wire, each decision at debug level
	Wire           bool
	Trace          io.Writer // when set, receives each decision as a line of JSON
}

// Reranker adjusts the scores of ranked tools for a query by the
// principal's lessons; it never brings in a tool the query did not find.
type Reranker interface {
	Rerank(ctx context.Context, principal, query string, hits []Hit) []Hit
}

// Defaults for RouterOptions (figures: docs/routing.md).
const (
	DefaultTopK              = 5
	DefaultThreshold         = 0.35
	DefaultSameDomain        = 1.15
	DefaultCrossDomain       = 0.7
	DefaultCollisionDelta    = 0.08
	DefaultSemanticWeight    = 0.5
	DefaultMaxTools          = fuse.DefaultMaxTools
	DefaultContextSize       = 3 // recent domains in a session's domain context
	DefaultAbstainCoverage   = 0.10
	DefaultAbstainCommitment = 0.002
	DefaultAbstainAdvice     = 1
	DefaultKeepCoverage      = 0.10
	boundaryPerUpstream      = 2   // discovery tools one selected upstream brings
	candidatePool            = 50  // how deep the ranking is read before selection
	instancesPool            = 4   // how many times deeper with instances collapsed
	fuseDepth                = 100 // how deep each arm is read for fusion, at least
)

// DefaultNoiseFloor is the router's min_qr_score: it stops the top-k from
// padding the belt with tools that barely match.
const DefaultNoiseFloor = 0.2

// DefaultFusePolicy is fuse.DefaultPolicy with the router's noise floor.
func DefaultFusePolicy() fuse.Policy {
	p := fuse.DefaultPolicy()
	p.MinQRScore = DefaultNoiseFloor
	return p
}

// DefaultDiscoveryPrefixes mark the usual discovery tools.
var DefaultDiscoveryPrefixes = []string{"get_", "list_", "search_"}

func (o *RouterOptions) defaults() {
	o.TopK = orDefault(o.TopK, DefaultTopK)
	o.Threshold = orDefault(o.Threshold, DefaultThreshold)
	o.CollisionDelta = orDefault(o.CollisionDelta, DefaultCollisionDelta)
	o.KeepCoverage = orDefault(o.KeepCoverage, DefaultKeepCoverage)
	o.AbstainCoverage = orDefault(o.AbstainCoverage, DefaultAbstainCoverage)
	o.AbstainCommitment = orDefault(o.AbstainCommitment, DefaultAbstainCommitment)
	o.AbstainAdvice = orDefault(o.AbstainAdvice, DefaultAbstainAdvice)
	o.SemanticWeight = orDefault(o.SemanticWeight, DefaultSemanticWeight)
	defaults.Set(&o.SameDomain, DefaultSameDomain)
	defaults.Set(&o.CrossDomain, DefaultCrossDomain)
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// orDefault reads an option: zero takes def, a negative value means zero.
func orDefault[T int | float64](v, def T) T {
	if v == 0 {
		return def
	}
	return max(v, 0)
}

// Router ranks the catalog for a request and decides which tools to hand
// over. It holds no session state and is safe for concurrent use.
type Router struct {
	opts       RouterOptions
	userFacing func(string) bool // the fuse policy's test; nil: every tool is
	traceMu    sync.Mutex
	hits       sync.Pool // of *[]Hit, a lexical ranking's storage (see rank)

	mu        sync.Mutex
	discovery map[string][]string // upstream -> its discovery tools' names
	known     map[string]Tool
	destroys  map[string]bool   // by name: the tool is destructive (see isDestructive)
	acts      map[string]action // by name: its name's action, when it has one (toolAction)
	copies    map[[2]string]int // own name and contract -> tools with them
	shared    int               // entries of copies above one

	names map[string][]string // guarded by mu: upstream -> the names SetUpstream gave it
}

// NewRouter returns a Router with an empty catalog. It does no I/O.
func NewRouter(opts RouterOptions) *Router {
	opts.defaults()
	return &Router{opts: opts, userFacing: opts.Fuse.UserFacing(),
		discovery: map[string][]string{}, known: map[string]Tool{}, destroys: map[string]bool{}, acts: map[string]action{}, names: map[string][]string{}, copies: map[[2]string]int{}}
}

// Internal tells that require_user_facing is on and name is one of the
// internal_tools: never ranked, handed over, described, called through
// the gateway's own tools or named in an alert.
func (r *Router) Internal(name string) bool {
	return r.opts.Fuse.RequireUserFacing && r.userFacing != nil && !r.userFacing(name)
}

// Options returns the options in force, defaults applied.
func (r *Router) Options() RouterOptions { return r.opts }

// SetUpstream replaces one upstream's tools in the lexical index and the
// catalog (nil removes it). It does no I/O: Embed updates embeddings.
func (r *Router) SetUpstream(upstream string, tools []Tool) {
	r.opts.Lexical.SetUpstream(upstream, tools)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, name := range r.names[upstream] { // its own, not every upstream's: a start is not quadratic
		if t, ok := r.known[name]; ok && t.Upstream == upstream {
			delete(r.known, name)
			delete(r.destroys, name)
			delete(r.acts, name)
			r.count(t, -1)
		}
	}
	delete(r.names, upstream)
	var disc []string
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
		if old, ok := r.known[t.Name]; ok {
			r.count(old, -1) // another upstream's, replaced as in the index
		}
		r.known[t.Name] = t
		r.destroys[t.Name] = isDestructive(t)
		r.acts[t.Name] = toolAction(t) // worked out once, not at every route (weighActions)
		r.count(t, +1)
		if r.isDiscovery(t) {
			disc = append(disc, t.Name)
		}
	}
	r.discovery[upstream] = disc
	if len(names) > 0 {
		r.names[upstream] = names
	}
}

// count adds delta to the copies of t's own name and contract, and keeps
// shared (how many of them several upstreams expose) in step.
func (r *Router) count(t Tool, delta int) {
	if t.Contract == "" {
		return
	}
	key := [2]string{cmp.Or(t.Original, t.Name), t.Contract}
	if r.copies[key] > 1 {
		r.shared--
	}
	if r.copies[key] += delta; r.copies[key] > 1 {
		r.shared++
	} else if r.copies[key] <= 0 {
		delete(r.copies, key)
	}
}

// hasInstances reports whether several instances of a server share a tool.
func (r *Router) hasInstances() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shared > 0
}

// Semantic reports whether embeddings are configured.
func (r *Router) Semantic() bool { return r.opts.Semantic != nil }

// Embed updates one upstream's tool embeddings (a no-op without them);
// on failure the previous vectors stay and the error says why.
func (r *Router) Embed(ctx context.Context, upstream string, tools []Tool) error {
	if r.opts.Semantic == nil {
		return nil
	}
	return r.opts.Semantic.SetUpstream(ctx, upstream, tools)
}

func (r *Router) isDiscovery(t Tool) bool {
	name := cmp.Or(t.Original, t.Name)
	return slices.ContainsFunc(r.opts.DiscoveryPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

// Tool returns a catalog tool by exposed name.
func (r *Router) Tool(name string) (Tool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.known[name]
	return t, ok
}

// Rank returns the catalog ranked for query, best first, lexical and
// semantic (when on) fused; k <= 0 is every tool with a score.
func (r *Router) Rank(ctx context.Context, query string, k int) []Hit {
	return r.rankArms(ctx, query, query, k)
}

// rankArms is Rank with a query for each arm.
func (r *Router) rankArms(ctx context.Context, lexical, semantic string, k int) []Hit {
	if r.opts.Semantic == nil {
		return r.opts.Lexical.Search(lexical, k)
	}
	// Fusion reads each arm's top fuseDepth (or k, when deeper), not the
	// whole catalog: a tool that far down one arm is unrelated there.
	n := 0
	if k > 0 {
		n = max(k, fuseDepth)
	}
	sem, err := r.opts.Semantic.Search(ctx, semantic, n)
	if err != nil {
		return r.opts.Lexical.Search(lexical, k) // the semantic index warned once
	}
	return head(FuseHits(r.opts.Lexical.Search(lexical, n), sem, r.opts.SemanticWeight), k)
}

// SyncEmbeddings retries the upstreams whose embedding failed.
func (r *Router) SyncEmbeddings(ctx context.Context) error {
	if r.opts.Semantic == nil {
		return nil
	}
	return r.opts.Semantic.Sync(ctx)
}

// head returns the first k of s; k <= 0 is all of it.
func head[T any](s []T, k int) []T {
	if k > 0 && len(s) > k {
		return s[:k]
	}
	return s
}

// Request is one routing question.
type Request struct {
	Query    string     // what the tools are for, in words
	Keywords string     // when set, added to Query for the lexical ranking
	Intent   string     // when set, replaces Query for the semantic ranking
	Needs    []string   // tools the model believes it needs, by exposed name
	Route    fuse.Route // the kind of turn, when the caller knows it
	Domains  []string   // the session's domain context; empty: no affinity
	// Exclude names tools never to select (the proxy's own).
	Exclude func(name string) bool
	// Core names the tools always on the belt: ranked, but never named in
	// a collision alert.
	Core      func(name string) bool
	Principal string // who asks: only its own and the shared lessons apply
	TopK      int    // when positive, replaces RouterOptions.TopK (within max_tools)
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
	// ranked lower, best first.
	Alternatives []string `json:"alternatives,omitempty"`
	// Coverage, Words and Matched: see Hit.
	Coverage float64    `json:"coverage"`
	Words    int        `json:"-"`
	Matched  int        `json:"-"`
	Foreign  int        `json:"-"` // see Hit
	matches  uint64     // bit i: matches Decision.request.Known[i] (see Hit)
	raw      float64    // the ranking's own score, for its commitment
	adjusted float64    // unclipped, for ordering
	runnerUp *Candidate // the best of the alternatives, for the collision alert
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
	Query    string
	Ranked   []Candidate // the candidates considered, best first, after affinity
	Selected []Candidate // the tools to hand over, in belt order
	Boundary []string    // the names Selected gained by boundary loading
	Unknown  []string    // stated needs that are not in the catalog
	Alerts   []Alert
	Affinity bool // tells whether domain multipliers were applied
	// Abstained: no tool serves the request; the selection is empty and a
	// no_match alert names the closest candidates.
	Abstained bool
	Took      time.Duration
	why       abstention   // says why the router abstained, for the no_match alert
	request   RequestWords // what the ranking said of the request itself
}

// abstention is why the router abstained.
type abstention uint8

const (
	abstainedNot      abstention = iota
	abstainedCoverage            // no top tool matches enough of the request
	abstainedFlat                // no tool stands out of the ranking (commitment.go)
	abstainedAdvice              // advice or an errand about things no tool knows (advice.go)
)

// Route answers one request. It never fails: with nothing relevant, the
// selection is empty and an alert says so.
func (r *Router) Route(ctx context.Context, req Request) Decision {
	start := time.Now()
	d := Decision{Query: req.Query, Affinity: len(req.Domains) > 0}
	if strings.TrimSpace(req.Query) != "" {
		if r.opts.Fuse.CollapseDuplicates && r.hasInstances() {
			// Read deeper: instances of one server fill the ranking with
			// copies of each tool, which collapse to one.
			d.Ranked, d.request = r.rank(ctx, req, instancesPool*candidatePool)
			d.Ranked = head(r.collapseInstances(d.Ranked), candidatePool)
		} else {
			d.Ranked, d.request = r.rank(ctx, req, candidatePool)
		}
		d.why = r.abstains(req, d.Ranked)
		d.Abstained = d.why != abstainedNot
	}
	var selected []fuse.Candidate
	if !d.Abstained {
		selected = r.preselect(d.Ranked, req.TopK, d.request.Clauses)
	}
	res := fuse.Fuse(*r.opts.Fuse, fuse.Input{
		Route:      req.Route,
		Needs:      req.Needs,
		Candidates: selected,
		Known:      func(name string) bool { _, ok := r.Tool(name); return ok && (req.Exclude == nil || !req.Exclude(name)) },
		UserFacing: r.userFacing,
	})
	d.Unknown = res.Unknown
	d.Selected = r.candidates(res.Tools, d.Ranked)
	if strings.TrimSpace(req.Query) != "" && !d.Abstained {
		// Nothing ranked passed the noise floor: only stated needs, if
		// any, and none of them among the ranking's top tools.
		d.Abstained = !slices.ContainsFunc(d.Selected, func(c Candidate) bool {
			return !slices.Contains(req.Needs, c.Name) || c.Coverage > 0 && rankOf(d.Ranked, c.Name) < r.opts.TopK
		})
	}
	r.dropOffAction(&d, req)
	d.Boundary = r.boundary(&d, req)
	d.Alerts = r.alerts(d, req)
	if a, ok := r.guardDestructive(&d, req); ok {
		d.Alerts = append(d.Alerts, a)
	}
	d.Took = time.Since(start)
	r.trace(req, d)
	return d
}

// rank scores the catalog and applies domain affinity.
func (r *Router) rank(ctx context.Context, req Request, pool int) ([]Candidate, RequestWords) {
	lexical, semantic := req.Query, req.Query
	if k := strings.TrimSpace(req.Keywords); k != "" {
		lexical += " " + k
	}
	if i := strings.TrimSpace(req.Intent); i != "" {
		semantic = i
	}
	var hits []Hit
	if r.opts.Semantic == nil && r.opts.Lessons == nil {
		// Only this function reads the ranking: its storage is reused.
		buf, _ := r.hits.Get().(*[]Hit)
		if buf == nil {
			buf = new([]Hit)
		}
		hits = r.opts.Lexical.search(*buf, lexical, pool, nil)
		defer func() { *buf = hits[:0]; r.hits.Put(buf) }()
	} else {
		hits = r.rankArms(ctx, lexical, semantic, pool)
	}
	var before map[string]float64
	if r.opts.Lessons != nil {
		before = make(map[string]float64, len(hits))
		for _, h := range hits {
			before[h.Name] = h.Score
		}
		hits = r.opts.Lessons.Rerank(ctx, req.Principal, req.Query, hits)
	}
	out := make([]Candidate, 0, len(hits))
	r.mu.Lock()
	var rw RequestWords // set on the top few hits
	foreign := outOfDomain(req.Query)
	for _, h := range hits {
		if h.Request != nil {
			rw = *h.Request
		}
		t, ok := r.known[h.Name]
		if !ok || t.Exclusive && foreign(t) { // foreign reads only exclusive tools
			continue
		}
		c := Candidate{Name: h.Name, Upstream: t.Upstream, Domain: domainOf(t), RawScore: h.Score, Multiplier: 1,
			Coverage: h.Coverage, Words: h.Words, Matched: h.Matched, Foreign: h.Foreign, raw: h.Raw, matches: h.Matches}
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
	r.mu.Unlock()
	// Exclude is the caller's and may call back into the router: not under the lock.
	out = slices.DeleteFunc(out, func(c Candidate) bool { return req.Exclude != nil && req.Exclude(c.Name) || r.Internal(c.Name) })
	r.weighActions(lexical, out)
	if byAdjusted := func(a, b Candidate) int { return cmp.Compare(b.adjusted, a.adjusted) }; !slices.IsSortedFunc(out, byAdjusted) {
		slices.SortStableFunc(out, byAdjusted) // the ranking's order unless affinity or actions changed it
	}
	return out, rw
}

// collapseInstances keeps the best-ranked of the tools several instances
// of one server expose (same own name and contract), the others its
// alternatives.
func (r *Router) collapseInstances(ranked []Candidate) []Candidate {
	kept := map[[2]string]int{} // own name and contract -> index in out
	out := ranked[:0:0]
	for _, c := range ranked {
		t, _ := r.Tool(c.Name)
		if t.Contract == "" {
			out = append(out, c)
			continue
		}
		key := [2]string{cmp.Or(t.Original, t.Name), t.Contract}
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

func domainOf(t Tool) string { return cmp.Or(t.Domain, t.Upstream) }

// abstains decides that no tool serves the request (see the Abstain
// options), unless a lesson raised a top tool or the model stated a need
// for one (seed 000's needs-first policy).
func (r *Router) abstains(req Request, ranked []Candidate) abstention {
	if len(ranked) == 0 {
		return abstainedCoverage
	}
	if r.opts.AbstainCoverage == 0 {
		return abstainedNot // off
	}
	if slices.ContainsFunc(ranked[:min(len(ranked), r.opts.TopK)], func(c Candidate) bool {
		return c.Lesson > 0 || c.Coverage > 0 && slices.Contains(req.Needs, c.Name)
	}) {
		return abstainedNot
	}
	top := slices.MaxFunc(ranked, func(a, b Candidate) int { return cmp.Compare(a.RawScore, b.RawScore) })
	covered := top.Coverage
	for _, c := range ranked[:min(len(ranked), r.opts.TopK)] {
		covered = max(covered, c.Coverage)
	}
	if covered < r.opts.AbstainCoverage {
		return abstainedCoverage
	}
	why := abstainedNot
	if r.opts.AbstainCommitment > 0 && uncommitted(ranked, top.Coverage, r.opts.AbstainCommitment) {
		why = abstainedFlat
	} else if r.asksAdviceAbout(req.Query, ranked, covered, top.Matched) {
		why = abstainedAdvice
	}
	if t, ok := r.Tool(top.Name); why != abstainedNot && r.opts.Lexical.opts.Off&OffNamed == 0 && ok && namesNoun(t, req.Query) {
		return abstainedNot // the top tool is named for what is asked (named.go)
	}
	return why
}

// asksAdviceAbout is the advice check of abstention (advice.go), matched
// the words the best-scored tool matches; the request's form is read last.
func (r *Router) asksAdviceAbout(query string, ranked []Candidate, covered float64, matched int) bool {
	foreign := 0
	for _, c := range ranked[:min(len(ranked), wordsCounted)] {
		foreign = max(foreign, c.Foreign)
	}
	return covered < r.opts.AbstainAdvice && foreign >= adviceForeign && matched < adviceMatched && asksAdvice(query)
}

// partialWords is the longest request, in words, whose every word one
// tool must match.
const partialWords = 3

// servedWhole checks that a top tool matches each word of a short
// one-clause request, unknown words included ("query logs":
// calculator_log matches only log), unless the model stated a need for
// one. A miss is an alert, not an abstention: a short request is as often
// a modifier and a noun, where the tool matching the noun is right.
func servedWhole(d Decision, needs []string) bool {
	rw := d.request
	n := len(rw.Known) + len(rw.Unknown)
	top := d.Ranked[:min(len(d.Ranked), wordsCounted)]
	return rw.Clauses > 1 || n < 2 || n > partialWords || slices.ContainsFunc(top, func(c Candidate) bool { return slices.Contains(needs, c.Name) }) ||
		len(rw.Unknown) == 0 && slices.ContainsFunc(top, func(c Candidate) bool { return c.Matched >= len(rw.Known) })
}

// preselect keeps the top k and anything at or above the threshold, for
// the fuse policy's noise floor (min_qr_score) to sift.
func (r *Router) preselect(ranked []Candidate, topK, clauses int) []fuse.Candidate {
	if topK <= 0 {
		topK = r.opts.TopK
	}
	// The diversified ranking of several clauses interleaves their
	// tools: one more tool for each further clause.
	if clauses > 1 && topK > 0 {
		topK += clauses - 1
	}
	// What is handed over is a prefix of the ranking: the deepest top-k
	// tool that passes on its own (score at the noise floor, or coverage
	// at KeepCoverage) takes every tool above it along. A min_qr_score
	// set above the default is the person's floor, which nothing lifts.
	keep := r.opts.KeepCoverage > 0 && r.opts.Fuse.MinQRScore <= DefaultNoiseFloor
	last := -1
	for i, c := range ranked[:min(len(ranked), topK)] {
		if c.Score >= r.opts.Fuse.MinQRScore || keep && c.Coverage >= r.opts.KeepCoverage {
			last = i
		}
	}
	var out []fuse.Candidate
	for i, c := range ranked {
		if i < topK || c.Score >= r.opts.Threshold {
			score := c.Score
			if i <= last {
				score = max(score, r.opts.Fuse.MinQRScore)
			}
			out = append(out, fuse.Candidate{Tool: c.Name, Score: score})
		}
	}
	return out
}

// candidates looks the fused names up in the ranking (or scores them 0).
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

// boundary adds the discovery tools of each selected upstream, best
// ranked first, within the caps, and returns their names.
func (r *Router) boundary(d *Decision, req Request) []string {
	if len(d.Selected) == 0 || len(r.opts.DiscoveryPrefixes) == 0 {
		return nil
	}
	switch req.Route {
	case fuse.RouteSimple, fuse.RouteGeneralChat, fuse.RouteExit:
		return nil // the route's cardinality holds: one tool, or none
	}
	var upstreams []string
	for _, c := range d.Selected {
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
			selected := slices.ContainsFunc(d.Selected, func(c Candidate) bool { return c.Name == name })
			if selected || (req.Exclude != nil && req.Exclude(name)) || !r.opts.Fuse.Admits(name, r.userFacing) {
				continue
			}
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

// alerts raises the collision, partial-match and no-match alerts.
func (r *Router) alerts(d Decision, req Request) []Alert {
	if d.Abstained {
		return []Alert{noMatch(d)}
	}
	var out []Alert
	if a, ok := r.collision(d, req); ok {
		out = append(out, a)
	}
	if len(d.Ranked) > 0 && !servedWhole(d, req.Needs) {
		out = append(out, partialMatch(d))
	}
	return out
}

// partialMatch is the alert of a two-word request that no top tool
// matches in both words.
func partialMatch(d Decision) Alert {
	a := Alert{Kind: "partial_match"}
	var parts []string
	for _, c := range d.Ranked[:min(len(d.Ranked), wordsCounted)] {
		a.Tools = append(a.Tools, c.Name)
		hit, miss := d.request.split(c)
		part := c.Name
		switch {
		case len(hit) > 0 && len(miss) > 0:
			part += " matches " + quoteWords(hit) + ", not " + quoteWords(miss)
		case len(hit) > 0:
			part += " matches " + quoteWords(hit)
		case len(miss) > 0:
			part += " matches none of " + quoteWords(miss)
		}
		parts = append(parts, part)
	}
	a.Message = fmt.Sprintf("Routing alert: no tool matches all of %q: %s. They may do something else "+
		"(a shared word is not a shared intent): check that a tool does what is asked before calling it, "+
		"or tell the user this capability seems to be missing.", d.Query, strings.Join(parts, "; "))
	return a
}

// namedWords is how many words an alert names for each tool.
const namedWords = 3

// split returns the request's words that c matches and those it does not
// (unknown words among them).
func (rw *RequestWords) split(c Candidate) (hit, miss []string) {
	for i, w := range rw.Known {
		if c.matches&(1<<i) != 0 {
			hit = append(hit, w)
		} else {
			miss = append(miss, w)
		}
	}
	return hit, append(miss, rw.Unknown...)
}

// quoteWords quotes the first namedWords of words, comma-separated.
func quoteWords(words []string) string {
	q := make([]string, 0, min(len(words), namedWords))
	for _, w := range words[:min(len(words), namedWords)] {
		q = append(q, strconv.Quote(w))
	}
	if len(words) > namedWords {
		q = append(q, "...")
	}
	return strings.Join(q, ", ")
}

// collision raises the collision alert on the scores before affinity, so
// that the domain context never hides a near-tie, and says when the context
// ranked another domain's tool first. Core tools take no part.
func (r *Router) collision(d Decision, req Request) (Alert, bool) {
	core := func(c *Candidate) bool { return req.Core != nil && req.Core(c.Name) }
	best := func(skip func(*Candidate) bool) *Candidate {
		var x *Candidate
		for i := range d.Ranked {
			if c := &d.Ranked[i]; !core(c) && !skip(c) && (x == nil || c.RawScore > x.RawScore) {
				x = c
			}
		}
		return x
	}
	a := best(func(*Candidate) bool { return false })
	if a == nil {
		return Alert{}, false
	}
	b := best(func(c *Candidate) bool { return c.Domain == a.Domain })
	if ru := a.runnerUp; ru != nil && ru.Domain != a.Domain && !core(ru) && (b == nil || ru.RawScore > b.RawScore) {
		b = ru
	}
	if b == nil {
		return Alert{}, false
	}
	tie := a.RawScore-b.RawScore < r.opts.CollisionDelta && b.RawScore >= r.opts.Fuse.MinQRScore
	top := d.Ranked[0]
	lifted := d.Affinity && top.Domain != a.Domain && !core(&top)
	if !tie && !lifted {
		return Alert{}, false
	}
	if lifted && top.Name != b.Name {
		b = &top
	}
	msg := fmt.Sprintf("Routing alert: %s (domain %s, score %.2f) and %s (domain %s, score %.2f) match this request almost equally. "+
		"Check which domain the user means before calling either; a shared keyword is not a shared intent.",
		a.Name, a.Domain, a.RawScore, b.Name, b.Domain, b.RawScore)
	if b == a.runnerUp { // copies of one server: a domain tells nothing apart
		msg = fmt.Sprintf("Routing alert: %s and %s are the same tool on two instances of one server (%s and %s), and the request matches both "+
			"almost equally (%.2f, %.2f). Check which instance holds what the user means before calling either.", a.Name, b.Name, a.Upstream, b.Upstream, a.RawScore, b.RawScore)
	}
	if lifted {
		msg = fmt.Sprintf("Routing alert: %s (domain %s) is ranked first only because this session used domain %s recently; "+
			"on the request alone %s (domain %s) scores %.2f against its %.2f. Check which domain the user means before calling either.",
			top.Name, top.Domain, top.Domain, a.Name, a.Domain, a.RawScore, top.RawScore)
	}
	return Alert{Kind: "collision", Tools: []string{a.Name, b.Name}, Domains: []string{a.Domain, b.Domain}, Message: msg}, true
}

// closestShown is how many of the closest candidates a no_match alert names.
const closestShown = 3

// noMatch is the alert of an abstention: the closest candidates, not as
// answers, and why.
func noMatch(d Decision) Alert {
	a := Alert{Kind: "no_match"}
	var closest []string
	for _, c := range d.Ranked {
		if len(a.Tools) == closestShown || c.Coverage <= 0 {
			break
		}
		a.Tools = append(a.Tools, c.Name)
		words := ""
		if hit, _ := d.request.split(c); len(hit) > 0 {
			words = quoteWords(hit) + ": "
		}
		share := fmt.Sprintf("%.0f%%", 100*c.Coverage)
		if c.Coverage < 0.005 {
			share = "under 1%"
		}
		closest = append(closest, fmt.Sprintf("%s (matches %s%s of the request)", c.Name, words, share))
	}
	a.Message = fmt.Sprintf("Nothing in the catalog serves %q", d.Query)
	if len(d.request.Unknown) > 0 {
		a.Message += "; no tool knows " + quoteWords(d.request.Unknown)
	}
	if len(closest) > 0 {
		a.Message += "; closest: " + strings.Join(closest, ", ") + ", which do something else"
		switch d.why {
		case abstainedFlat:
			a.Message += " (many tools match a word or two of the request about equally; none stands out)"
		case abstainedAdvice:
			a.Message += " (the request asks for advice or an errand about things no tool of the catalog knows)"
		}
	}
	a.Message += ". Tell the user this capability is missing rather than using an unrelated tool, or ask again naming the tool's action and object."
	return a
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
	r.opts.Logger.Debug("routing decision", "query", req.Query, "routing_query", r.cleaned(req), "needs", req.Needs, "route", req.Route,
		"domains", req.Domains, "affinity", d.Affinity, "top", top, "selected", names(d.Selected),
		"boundary", d.Boundary, "unknown", d.Unknown, "alerts", len(d.Alerts), "abstained", d.Abstained, "dur", d.Took)
	for _, c := range d.Ranked {
		if c.Lesson != 0 {
			r.opts.Logger.Debug("routing lesson applied", "tool", c.Name, "delta", c.Lesson)
		}
	}
	for _, a := range d.Alerts {
		r.opts.Logger.Debug("routing alert", "kind", a.Kind, "tools", a.Tools, "domains", a.Domains)
	}
}

// cleaned is the query the lexical ranking reads (see prepare).
func (r *Router) cleaned(req Request) string {
	q := prepare(req.Query, r.opts.Lexical.opts.Off).text
	if k := strings.TrimSpace(req.Keywords); k != "" {
		q += " " + k
	}
	return q
}

// traceRecord is one line of the trace file.
type traceRecord struct {
	Time      time.Time   `json:"time"`
	Query     string      `json:"query"`
	Routing   string      `json:"routing_query"` // see cleaned
	Needs     []string    `json:"needs,omitempty"`
	Route     fuse.Route  `json:"route,omitempty"`
	Domains   []string    `json:"domains,omitempty"`
	Affinity  bool        `json:"affinity"`
	Top       []Candidate `json:"top"`
	Selected  []string    `json:"selected"`
	Boundary  []string    `json:"boundary,omitempty"`
	Unknown   []string    `json:"unknown,omitempty"`
	Alerts    []Alert     `json:"alerts,omitempty"`
	Abstained bool        `json:"abstained,omitempty"`
	Lessons   []string    `json:"lessons,omitempty"` // tools whose score lessons changed
	TookMicro int64       `json:"took_us"`
}

func (r *Router) writeTrace(req Request, d Decision) {
	rec := traceRecord{Time: time.Now().UTC(), Query: req.Query, Routing: r.cleaned(req), Needs: req.Needs, Route: req.Route, Domains: req.Domains,
		Affinity: d.Affinity, Top: d.Ranked[:min(10, len(d.Ranked))], Selected: names(d.Selected), Boundary: d.Boundary,
		Unknown: d.Unknown, Alerts: d.Alerts, Abstained: d.Abstained, TookMicro: d.Took.Microseconds()}
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
