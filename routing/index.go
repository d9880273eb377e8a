package routing

import (
	"encoding/json"
	"slices"
	"sync"
)

// Tool is what the index knows of one catalog tool.
type Tool struct {
	Name        string          // exposed name, unique in the index
	Upstream    string          // the upstream server that owns the tool
	Domain      string          // topical domain; "" = Upstream
	Description string          // what the tool does, as its server says
	InputSchema json.RawMessage // JSON Schema object; may be nil
	Original    string          // the upstream's own name; "" = Name (not indexed)
	// Server is what the upstream is for, as configured; indexed with the
	// domain, it tells instances of one server apart.
	Server string
	// Contract identifies the tool's own name and contract: instances of
	// one server share it and only the best-ranked is offered; "": never.
	Contract    string
	Destructive bool // the annotations say destructiveHint (see destructive.go)
	// Exclusive: the tool serves only requests that name its Domain (see
	// exclusive.go).
	Exclusive bool
}

// Hit is one ranked tool. Score is calibrated to [0, 1] (see calibrate.go);
// Raw is the retriever's raw BM25F score.
type Hit struct {
	Name  string
	Score float64
	Raw   float64
	// Coverage is the share of the request (or of its best-covered
	// clause) the tool matches, in [0, 1] (see calibrate.go).
	Coverage float64
	// The rest is set on the top few hits only. Words is how many of the
	// request's words the catalog knows (values aside), Matched how many
	// of them the tool matches, Foreign how many are English nouns the
	// catalog does not know (advice.go), Request what the ranking says of
	// the request, and Matches has bit i set when the tool matches
	// Request.Known[i].
	Words, Matched int
	Foreign        int
	Request        *RequestWords
	Matches        uint64
}

// RequestWords is what a ranking says of the request itself.
type RequestWords struct {
	Clauses int // how many clauses the request was ranked by
	// Known are the request's words the catalog knows and Unknown those it
	// does not (nouns first), at most 16 each, for alerts.
	Known, Unknown []string
}

// Index is a lexical (BM25F) index of catalog tools, safe for concurrent
// use. The length-normalised frequencies depend on the average field
// lengths; after a change the first Search recomputes them once, so that
// a burst of SetUpstream calls at start-up costs one pass.
type Index struct {
	opts    IndexOptions // resolved: every default applied
	docTok  *Tokenizer
	qTok    *Tokenizer
	accs    sync.Pool // *accumulator, reused by Search
	queries sync.Pool // *queryScratch, reused by Search

	mu         sync.RWMutex
	docs       []doc              // by doc id; removed docs stay as holes
	free       []int32            // holes in docs, reused first
	byName     map[string]int32   // tool name → doc id
	byUpstream map[string][]int32 // upstream → its doc ids
	terms      map[string]int32   // term → term id
	termNames  []string           // by term id
	postings   [][]posting        // by term id
	fieldTFs   [][]fieldTF        // by term id, parallel to postings
	freeTerms  []int32            // term ids whose postings emptied
	stats      corpusStats
	stale      bool // postings' frequencies predate the last change
	// Rebuilt by refresh: order is, by doc id, the doc's place in name
	// order, which breaks ties (apart from docs, so that ranking reads 4
	// bytes a doc); byOrder is its inverse; inName tells, by term id,
	// whether some tool's name holds the term (nouns.go).
	order   []int32
	byOrder []int32
	inName  []bool
}

// doc is one indexed tool.
type doc struct {
	tool Tool
	live bool
	lens [numFields]float32 // field lengths in terms
}

// NewIndex returns an empty Index configured by opts.
func NewIndex(opts IndexOptions) *Index {
	opts = opts.withDefaults()
	return &Index{
		opts:       opts,
		docTok:     NewTokenizer(opts.Tokenizer),
		qTok:       &Tokenizer{opts: opts.Tokenizer, query: true, memo: &termMemo{}, expand: opts.SynonymWeight > 0},
		byName:     map[string]int32{},
		byUpstream: map[string][]int32{},
		terms:      map[string]int32{},
	}
}

// Len returns the number of tools in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byName)
}

// Tool returns the tool called name.
func (ix *Index) Tool(name string) (Tool, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	id, ok := ix.byName[name]
	if !ok {
		return Tool{}, false
	}
	return ix.docs[id].tool, true
}

// SetUpstream replaces every tool of upstream with tools (nil removes
// them), analysing them outside the lock. A tool whose name another
// upstream holds replaces that tool; within tools, the first of two equal
// names wins.
func (ix *Index) SetUpstream(upstream string, tools []Tool) {
	analysed := ix.analyseAll(upstream, tools)

	ix.mu.Lock()
	defer ix.mu.Unlock()
	removed := ix.byUpstream[upstream]
	for _, a := range analysed {
		if id, ok := ix.byName[a.tool.Name]; ok && ix.docs[id].tool.Upstream != upstream {
			removed = append(removed, id)
			ix.dropFromUpstream(ix.docs[id].tool.Upstream, id)
		}
	}
	ix.removeDocs(removed)
	delete(ix.byUpstream, upstream)
	ids := make([]int32, 0, len(analysed))
	for i := range analysed {
		ids = append(ids, ix.addDoc(&analysed[i]))
	}
	if len(ids) > 0 {
		ix.byUpstream[upstream] = ids
	}
	ix.stale = true
}

// analyseAll turns tools into analysed documents, dropping repeated names.
func (ix *Index) analyseAll(upstream string, tools []Tool) []analysed {
	tools = uniqueTools(tools)
	out := make([]analysed, len(tools))
	counts := make(map[string]int32, 128)
	for i, t := range tools {
		t.Upstream = upstream
		out[i] = ix.analyse(t, counts)
	}
	return out
}

// dropFromUpstream forgets that upstream owns doc id.
func (ix *Index) dropFromUpstream(upstream string, id int32) {
	ids := slices.DeleteFunc(ix.byUpstream[upstream], func(x int32) bool { return x == id })
	if len(ids) == 0 {
		delete(ix.byUpstream, upstream)
		return
	}
	ix.byUpstream[upstream] = ids
}

// addDoc stores one analysed document and posts its terms.
func (ix *Index) addDoc(a *analysed) int32 {
	var id int32
	if n := len(ix.free); n > 0 {
		id, ix.free = ix.free[n-1], ix.free[:n-1]
	} else {
		id = int32(len(ix.docs))
		ix.docs = append(ix.docs, doc{})
	}
	for _, tt := range a.terms {
		tid := ix.termID(tt.term)
		ix.postings[tid] = append(ix.postings[tid], posting{doc: id})
		ix.fieldTFs[tid] = append(ix.fieldTFs[tid], tt.tf)
	}
	ix.docs[id] = doc{tool: a.tool, live: true, lens: a.lens}
	ix.byName[a.tool.Name] = id
	ix.stats.add(a.lens)
	return id
}

// termID returns the id of term, creating it when new.
func (ix *Index) termID(term string) int32 {
	if id, ok := ix.terms[term]; ok {
		return id
	}
	var id int32
	if n := len(ix.freeTerms); n > 0 {
		id, ix.freeTerms = ix.freeTerms[n-1], ix.freeTerms[:n-1]
	} else {
		id = int32(len(ix.postings))
		ix.postings = append(ix.postings, nil)
		ix.fieldTFs = append(ix.fieldTFs, nil)
		ix.termNames = append(ix.termNames, "")
	}
	ix.terms[term] = id
	ix.termNames[id] = term
	return id
}

// removeDocs deletes docs ids from the index in one pass over the
// postings (a doc does not keep its terms: a start adds thousands of docs
// and removes none), each posting list filtered once however many of its
// documents go.
func (ix *Index) removeDocs(ids []int32) {
	if len(ids) == 0 {
		return
	}
	gone := make([]bool, len(ix.docs))
	for _, id := range ids {
		d := &ix.docs[id]
		if !d.live {
			continue
		}
		gone[id] = true
		ix.stats.remove(d.lens)
		delete(ix.byName, d.tool.Name)
		*d = doc{}
		ix.free = append(ix.free, id)
	}
	for tid, postings := range ix.postings {
		if !slices.ContainsFunc(postings, func(p posting) bool { return gone[p.doc] }) {
			continue
		}
		ps, tfs := postings[:0], ix.fieldTFs[tid][:0]
		for i, p := range postings {
			if !gone[p.doc] {
				ps, tfs = append(ps, p), append(tfs, ix.fieldTFs[tid][i])
			}
		}
		if len(ps) == 0 {
			delete(ix.terms, ix.termNames[tid])
			ix.postings[tid], ix.fieldTFs[tid], ix.termNames[tid] = nil, nil, ""
			ix.freeTerms = append(ix.freeTerms, int32(tid))
			continue
		}
		ix.postings[tid], ix.fieldTFs[tid] = ps, tfs
	}
}
