package routing

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/routing/internal/vec"
)

// ErrSemanticUnavailable is wrapped by every error of [SemanticIndex.Search];
// the caller then ranks with lexical scores alone.
var ErrSemanticUnavailable = errors.New("semantic retrieval unavailable")

// SemanticOptions configures a [SemanticIndex]. Embedder is required; every
// other zero field takes the default documented on it.
type SemanticOptions struct {
	Embedder Embedder      // turns tool texts and queries into vectors
	Model    string        // names the embedding model; it is part of every cache key
	Cache    VectorStore   // keeps the tool vectors across runs; nil: in memory only
	Timeout  time.Duration // bounds one query embedding; default 2s
	// RetryAfter is how long Search fails fast after an embedder failure
	// but for cached queries [5s]; negative: never.
	RetryAfter time.Duration
	Logger     *slog.Logger // receives the outage warning and recovery notice; nil is silent
}

const (
	queryCacheSize = 512 // query vectors kept
	semanticFloor  = 0.3 // the cosine that maps to score 0 (Search)
)

// SemanticIndex ranks catalog tools by the cosine between the embeddings
// of a query and of each tool's text. It is safe for concurrent use; the
// embedder is never called with the lock held. An outage is logged once,
// and its end.
type SemanticIndex struct {
	opts  SemanticOptions // defaults applied
	cache *vectorCache
	now   func() time.Time // time.Now; tests replace it

	mu        sync.Mutex
	upstreams map[string][]semEntry // by upstream: its embedded tools
	applied   map[string]uint64     // by upstream: seq of the tools in upstreams
	pending   map[string]pendingSet // upstreams whose latest tools failed to embed
	seq       uint64                // last SetUpstream sequence number
	queries   *queryLRU
	ready     bool      // the embedder worked and has not failed since
	down      bool      // in an outage, already warned about
	lastErr   error     // the outage's latest error
	retryAt   time.Time // Search calls the embedder again from then
}

// semEntry is one embedded tool.
type semEntry struct {
	name string
	vec  []float32 // unit length
}

// pendingSet is an upstream's tool list that still needs embedding.
type pendingSet struct {
	tools []Tool
	seq   uint64
}

// NewSemanticIndex returns an empty index. It does no I/O.
func NewSemanticIndex(opts SemanticOptions) *SemanticIndex {
	defaults.Set(&opts.Timeout, 2*time.Second)
	opts.RetryAfter = cmp.Or(opts.RetryAfter, 5*time.Second) // negative: never
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &SemanticIndex{
		opts:      opts,
		cache:     newStoreCache(opts.Cache, opts.Model, opts.Logger),
		now:       time.Now,
		upstreams: map[string][]semEntry{},
		applied:   map[string]uint64{},
		pending:   map[string]pendingSet{},
		queries:   newQueryLRU(queryCacheSize),
	}
}

// SetUpstream embeds the tools of upstream (see toolText), cache misses
// in one call, and replaces its vectors (nil removes it); names clash as
// in the lexical index. On failure the upstream keeps its previous
// vectors and stays pending until [SemanticIndex.Sync] or a later
// SetUpstream; while it has none at all, Search fails rather than rank
// its tools as unrelated.
func (s *SemanticIndex) SetUpstream(ctx context.Context, upstream string, tools []Tool) error {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	return s.setUpstream(ctx, upstream, tools, seq)
}

// Sync embeds the latest tools of every pending upstream.
func (s *SemanticIndex) Sync(ctx context.Context) error {
	s.mu.Lock()
	todo := maps.Clone(s.pending)
	s.mu.Unlock()
	var errs []error
	for _, u := range slices.Sorted(maps.Keys(todo)) {
		errs = append(errs, s.setUpstream(ctx, u, todo[u].tools, todo[u].seq))
	}
	return errors.Join(errs...)
}

// setUpstream is SetUpstream for call seq: an older call than the one
// the upstream holds changes nothing.
func (s *SemanticIndex) setUpstream(ctx context.Context, upstream string, tools []Tool, seq uint64) error {
	tools = uniqueTools(tools)
	entries, err := s.embedTools(ctx, tools)
	if err != nil {
		err = fmt.Errorf("embedding tools of %s: %w", upstream, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.applied[upstream] {
		return err // a newer call already set the upstream
	}
	if err != nil {
		if p, ok := s.pending[upstream]; !ok || p.seq <= seq {
			s.pending[upstream] = pendingSet{tools: tools, seq: seq}
		}
		return err
	}
	if p, ok := s.pending[upstream]; ok && p.seq <= seq {
		delete(s.pending, upstream)
	}
	s.applied[upstream] = seq
	s.replaceLocked(upstream, entries)
	return nil
}

// embedTools returns the entries of tools, embedding the cache misses.
func (s *SemanticIndex) embedTools(ctx context.Context, tools []Tool) ([]semEntry, error) {
	texts := make([]string, len(tools))
	keys := make([]vecKey, len(tools))
	for i, t := range tools {
		texts[i] = toolText(t)
		keys[i] = s.cache.key(texts[i])
	}
	vecs := s.cache.get(keys)
	if err := s.fillMisses(ctx, texts, keys, vecs); err != nil {
		return nil, err
	}
	entries := make([]semEntry, len(tools))
	for i, t := range tools {
		entries[i] = semEntry{name: t.Name, vec: vecs[i]}
	}
	return entries, nil
}

// fillMisses embeds the texts whose vectors are nil, each once, in one
// call, and caches and fills in the new vectors.
func (s *SemanticIndex) fillMisses(ctx context.Context, texts []string, keys []vecKey, vecs [][]float32) error {
	slot := map[vecKey]int{} // key → its index in missKeys
	var missKeys []vecKey
	var missTexts []string
	for i, v := range vecs {
		if _, ok := slot[keys[i]]; v == nil && !ok {
			slot[keys[i]] = len(missKeys)
			missKeys = append(missKeys, keys[i])
			missTexts = append(missTexts, texts[i])
		}
	}
	if len(missKeys) == 0 {
		return nil
	}
	got, err := s.embed(ctx, missTexts)
	if err != nil {
		return err
	}
	if err := s.cache.put(missKeys, got); err != nil {
		s.opts.Logger.Warn("writing embedding cache", "model", s.opts.Model, "err", err)
	}
	for i := range vecs {
		if vecs[i] == nil {
			vecs[i] = got[slot[keys[i]]]
		}
	}
	return nil
}

// replaceLocked installs entries as upstream's, taking their names from
// any other.
func (s *SemanticIndex) replaceLocked(upstream string, entries []semEntry) {
	names := make(map[string]bool, len(entries))
	for _, e := range entries {
		names[e.name] = true
	}
	for u, es := range s.upstreams {
		if u == upstream || !slices.ContainsFunc(es, func(e semEntry) bool { return names[e.name] }) {
			continue
		}
		s.upstreams[u] = slices.DeleteFunc(slices.Clone(es), func(e semEntry) bool { return names[e.name] })
	}
	if len(entries) == 0 {
		delete(s.upstreams, upstream)
		return
	}
	s.upstreams[upstream] = entries
}

// embed calls the embedder, checks and normalises its vectors and
// records its health.
func (s *SemanticIndex) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if s.opts.Embedder == nil {
		return nil, errors.New("no embedder configured")
	}
	vecs, err := s.opts.Embedder.Embed(ctx, texts)
	if err == nil {
		err = checkVectors(vecs, len(texts))
	}
	if err != nil {
		if !errors.Is(ctx.Err(), context.Canceled) {
			s.fail(err) // a deadline, whoever set it, means a slow embedder
		}
		return nil, err
	}
	for _, v := range vecs {
		vec.Unit(v)
	}
	s.succeed()
	return vecs, nil
}

// checkVectors wants n vectors of one non-zero length.
func checkVectors(vecs [][]float32, n int) error {
	if len(vecs) != n {
		return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), n)
	}
	for _, v := range vecs {
		if len(v) == 0 || len(v) != len(vecs[0]) {
			return fmt.Errorf("embedder returned vectors of %d and %d dimensions", len(vecs[0]), len(v))
		}
	}
	return nil
}

// fail records an embedder failure: the first of an outage is logged.
func (s *SemanticIndex) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready, s.lastErr = false, err
	if s.opts.RetryAfter > 0 {
		s.retryAt = s.now().Add(s.opts.RetryAfter)
	}
	if !s.down {
		s.down = true
		s.opts.Logger.Warn("semantic routing unavailable, using lexical scores", "model", s.opts.Model, "err", err)
	}
}

// succeed records a working embedder and ends an outage.
func (s *SemanticIndex) succeed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ready = true
	if s.down {
		s.down, s.lastErr = false, nil
		s.opts.Logger.Info("semantic routing recovered", "model", s.opts.Model)
	}
}

// Search returns the tools ranked by cosine with query, best first, ties
// by name; k <= 0 returns every tool. Errors wrap [ErrSemanticUnavailable].
// Raw is the cosine; Score is clamp((cos - semanticFloor) / (1 -
// semanticFloor), 0, 1): unrelated texts have cosines of 0.3 to 0.5, so
// the floor maps to 0, making the scale comparable with the lexical score's.
func (s *SemanticIndex) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, nil
	}
	s.mu.Lock()
	// Entry slices are replaced, never changed in place: read unlocked.
	entries := slices.Collect(maps.Values(s.upstreams))
	qv, cached := s.queries.get(query)
	waiting := s.down && s.now().Before(s.retryAt)
	lastErr := s.lastErr
	missing := s.missingLocked()
	s.mu.Unlock()

	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: tools of %s not embedded", ErrSemanticUnavailable, strings.Join(missing, ", "))
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if !cached {
		if waiting {
			return nil, fmt.Errorf("%w: %w", ErrSemanticUnavailable, lastErr)
		}
		var err error
		if qv, err = s.embedQuery(ctx, query); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSemanticUnavailable, err)
		}
	}
	return s.rank(entries, qv, k), nil
}

// missingLocked returns the pending upstreams with no vectors, sorted.
func (s *SemanticIndex) missingLocked() []string {
	var out []string
	for u := range s.pending {
		if _, ok := s.upstreams[u]; !ok {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// embedQuery embeds one query within the timeout and caches its vector.
func (s *SemanticIndex) embedQuery(ctx context.Context, query string) ([]float32, error) {
	qctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	vecs, err := s.embed(qctx, []string{query})
	if err != nil {
		if ctx.Err() == nil && errors.Is(qctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no query embedding within %v: %w", s.opts.Timeout, err)
		}
		return nil, err
	}
	s.mu.Lock()
	s.queries.put(query, vecs[0])
	s.mu.Unlock()
	return vecs[0], nil
}

// rank returns the best k entries for qv: only those whose cosine
// reaches the k-th best's, found by selection, become hits and are sorted.
func (s *SemanticIndex) rank(entries [][]semEntry, qv []float32, k int) []Hit {
	var cosines []float64
	var keys []uint64
	for _, es := range entries {
		for _, e := range es {
			cos := vec.Dot(qv, e.vec)
			cosines, keys = append(cosines, cos), append(keys, descending(cos))
		}
	}
	bound := uint64(math.MaxUint64)
	if k > 0 && k < len(keys) {
		sel := slices.Clone(keys)
		selectSmallest(sel, k)
		bound = slices.Max(sel[:k])
	}
	hits := make([]Hit, 0, min(len(keys), max(k, 0)))
	i := 0
	for _, es := range entries {
		for _, e := range es {
			if cos := cosines[i]; keys[i] <= bound {
				hits = append(hits, Hit{Name: e.name, Score: calibrateCosine(cos, semanticFloor), Raw: cos})
			}
			i++
		}
	}
	slices.SortFunc(hits, byScoreThenName)
	return head(hits, k)
}

// descending maps x to an integer that orders the other way round.
func descending(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return b // negative: its bits grow as it falls
	}
	return ^(b | 1<<63)
}

func calibrateCosine(cos, floor float64) float64 {
	return clampScore((cos - floor) / (1 - floor))
}

func clampScore(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return min(max(x, 0), 1)
}

// byScoreThenName orders hits by score, raw score, then name.
func byScoreThenName(a, b Hit) int {
	return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.Raw, a.Raw), strings.Compare(a.Name, b.Name))
}

// toolText is the text embedded for t: what the lexical index reads, as
// sentences, parameters in name order (a stable cache key).
func toolText(t Tool) string {
	var b strings.Builder
	b.WriteString(nameWords(t.Name))
	if d := strings.TrimSpace(t.Description); d != "" {
		b.WriteString(": ")
		b.WriteString(d)
	}
	if srv := strings.TrimSpace(t.Server); srv != "" {
		b.WriteString("\nserver: ")
		b.WriteString(srv)
	}
	sep := ""
	walkSchema(t.InputSchema, func(f field, text string) {
		text = strings.TrimSpace(text)
		switch {
		case text == "":
		case f == fieldParam:
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString("parameter ")
			b.WriteString(nameWords(text))
			sep = ": "
		default:
			b.WriteString(sep)
			b.WriteString(text)
			sep = "; "
		}
	})
	return b.String()
}

// nameWords splits an identifier into lower-case words: "read file".
func nameWords(name string) string {
	var words []string
	splitWords(name, func(w string, kind wordKind) {
		if kind != wordJoined {
			words = append(words, w)
		}
	})
	return strings.Join(words, " ")
}

// uniqueTools returns tools without repeated names, the first kept.
func uniqueTools(tools []Tool) []Tool {
	seen := make(map[string]bool, len(tools))
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if !seen[t.Name] {
			seen[t.Name] = true
			out = append(out, t)
		}
	}
	return out
}

// queryLRU caches query vectors; its owner's mutex guards it.
type queryLRU struct {
	size  int
	order *list.List // of *queryEntry, most recent first
	byKey map[string]*list.Element
}

type queryEntry struct {
	query string
	vec   []float32
}

func newQueryLRU(size int) *queryLRU {
	return &queryLRU{size: size, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *queryLRU) get(query string) ([]float32, bool) {
	el, ok := c.byKey[query]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*queryEntry).vec, true
}

func (c *queryLRU) put(query string, vec []float32) {
	if el, ok := c.byKey[query]; ok {
		el.Value.(*queryEntry).vec = vec
		c.order.MoveToFront(el)
		return
	}
	c.byKey[query] = c.order.PushFront(&queryEntry{query: query, vec: vec})
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*queryEntry).query)
	}
}

// FuseHits merges the lexical and semantic hits of one query, best first,
// each scored (1-w)·lexical + w·semantic (w clamped to [0, 1], a tool
// missing from an arm's top N counting 0 there): unlike rank fusion, this
// keeps the calibration the threshold relies on. The lexical evidence is
// kept, so that abstention reads the same evidence as without embeddings.
func FuseHits(lexical, semantic []Hit, weightSemantic float64) []Hit {
	w := clampScore(weightSemantic)
	type pair struct {
		lex, sem, cov float64
		hit           Hit // the lexical hit, for its evidence
	}
	pairs := make([]pair, 0, len(lexical)+len(semantic))
	index := make(map[string]int, cap(pairs)) // name -> its pair
	at := func(name string) *pair {
		i, ok := index[name]
		if !ok {
			i = len(pairs)
			index[name] = i
			pairs = append(pairs, pair{hit: Hit{Name: name}})
		}
		return &pairs[i]
	}
	var req *RequestWords // what the lexical side says of the request
	foreign := 0
	for _, h := range lexical {
		p := at(h.Name)
		if s := clampScore(h.Score); s > p.lex {
			p.lex, p.hit = s, h
		}
		p.cov = max(p.cov, clampScore(h.Coverage))
		if h.Request != nil {
			req, foreign = h.Request, h.Foreign
		}
	}
	for _, h := range semantic {
		p := at(h.Name)
		p.sem = max(p.sem, clampScore(h.Score))
	}
	out := make([]Hit, 0, len(pairs))
	for _, p := range pairs {
		h := p.hit
		h.Score = (1-w)*p.lex + w*p.sem
		// The semantic score stands in for coverage on its side: how much
		// of the request the tool's text says, as the embedding sees it.
		h.Coverage = (1-w)*p.cov + w*p.sem
		h.Request, h.Foreign = req, foreign
		out = append(out, h)
	}
	slices.SortFunc(out, byScoreThenName)
	return out
}
