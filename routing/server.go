package routing

import (
	"cmp"
	"slices"
)

// Servers, then tools. Besides each tool, the index scores each upstream
// as one document: its description and all its tools' texts together.
// A request's words often name what a server is for rather than what one
// of its tools does ("post the release notes to the team channel" names
// a chat server, not its send_message tool's words), and a server whose
// tools together cover the request is likely the right one even where no
// single tool's text does. The server's score for the request lifts the
// tools of that server that match the request at all, by ServerWeight of
// the best tool's score times the server's share of the best server's
// score.
//
// The lift orders the ranking; it is not counted in a tool's coverage of
// the request, so that calibrated scores and abstention read the tool's
// own match (it is added to the loss, see accumulate).

// serverIndex holds the upstreams as documents, rebuilt by refresh.
type serverIndex struct {
	n        int         // upstreams
	postings [][]posting // by term id: (upstream number, BM25 pseudo-frequency)
	// of is each live doc's upstream number by doc id, kept apart from
	// docs so that lifting the touched tools does not read each one's
	// cache line.
	of []int32
}

// serverFieldWeights weigh a tool's fields in its server's document: the
// tools' names and descriptions and the server's own description (the
// domain field, which every tool repeats, counted once per server).
var serverFieldWeights = [numFields]float32{1, 1, 0.5, 0.25, 1}

// serverB is the length normalisation of server documents: full, so
// that an upstream with hundreds of tools does not lift them all for
// matching some word somewhere.
const serverB = 1

// buildServers numbers the upstreams, records each document's upstream
// number (servers.of), and builds the server postings from the documents'
// per-field frequencies. Called by refresh under the write lock.
func (ix *Index) buildServers() {
	ix.servers = serverIndex{}
	if ix.opts.ServerWeight <= 0 || !ix.anyUpstream() {
		return
	}
	num := make(map[string]int32, len(ix.byUpstream))
	lens := []float32{}
	ntools := []float32{}
	of := make([]int32, len(ix.docs))
	for i := range ix.docs {
		d := &ix.docs[i]
		if !d.live {
			continue
		}
		// A tool that names no upstream is a server of its own, not one
		// of a single server made of every such tool.
		s, ok := num[d.tool.Upstream]
		if !ok || d.tool.Upstream == "" {
			s = int32(len(lens))
			num[d.tool.Upstream] = s
			lens = append(lens, 0)
			ntools = append(ntools, 0)
		}
		of[i] = s
		ntools[s]++
		for f, l := range d.lens {
			if field(f) != fieldDomain {
				lens[s] += l
			}
		}
	}
	ix.servers.of = of
	ix.servers.n = len(lens)
	// The domain field repeats on every tool of a server: count it once.
	tfs := map[int32]map[int32]float32{}
	total := float32(0)
	for tid, ps := range ix.postings {
		if len(ps) == 0 {
			continue
		}
		ftfs := ix.fieldTFs[tid]
		var per map[int32]float32
		for i, p := range ps {
			srv := of[p.doc]
			tf := ftfs[i]
			x := float32(0)
			for f, c := range tf {
				if field(f) == fieldDomain {
					x += serverFieldWeights[f] * float32(c) / ntools[srv]
					continue
				}
				x += serverFieldWeights[f] * float32(c)
			}
			if x == 0 {
				continue
			}
			if per == nil {
				per = map[int32]float32{}
			}
			per[srv] += x
		}
		if per != nil {
			tfs[int32(tid)] = per
		}
	}
	for _, l := range lens {
		total += l
	}
	avg := float64(total) / float64(max(1, len(lens)))
	ix.servers.postings = make([][]posting, len(ix.postings))
	for tid, per := range tfs {
		ps := make([]posting, 0, len(per))
		for s, x := range per {
			ps = append(ps, posting{doc: s, tf: x / float32(lengthNorm(serverB, float64(lens[s]), avg))})
		}
		// In upstream order, so that sums come out the same every time.
		slices.SortFunc(ps, func(a, b posting) int { return cmp.Compare(a.doc, b.doc) })
		ix.servers.postings[tid] = ps
	}
}

// liftServers scores every upstream for the request and lifts the
// matching tools of the upstreams that score (see the comment at the top
// of this file). Only the whole request is scored: lifting each clause's
// tools by the clause's best server as well ranked no better on the
// benchmark sets, at a clause's worth of work each.
func (ix *Index) liftServers(acc *accumulator, rq *resolvedQuery) {
	beta := float32(ix.opts.ServerWeight)
	n := ix.servers.n
	if beta <= 0 || n < 2 || len(acc.touched) == 0 {
		return
	}
	acc.srv = grow(acc.srv, n)
	clear(acc.srv)
	acc.srvTF = grow(acc.srvTF, n)
	k1 := float32(ix.opts.K1)
	for gi := range rq.groups {
		g := &rq.groups[gi]
		if !g.word {
			continue
		}
		// The group's server frequency: its members' frequencies, each at
		// its weight, summed before saturation, as for tools.
		df := -1
		touched := acc.srvTouched[:0]
		for _, m := range g.members {
			ps := ix.servers.postings[m.tid]
			// The word's own frequency weighs the group when the catalog
			// has it, else its rarest synonym's, as for tools.
			if df < 0 || !g.members[0].exact && len(ps) < df {
				df = len(ps)
			}
			for _, p := range ps {
				if acc.srvTF[p.doc] == 0 {
					touched = append(touched, p.doc)
				}
				acc.srvTF[p.doc] += m.alt * p.tf
			}
		}
		w := float32(idf(n, max(df, 0)))
		for _, s := range touched {
			tf := acc.srvTF[s]
			acc.srvTF[s] = 0
			acc.srv[s] += w * tf / (k1 + tf)
		}
		acc.srvTouched = touched
	}
	ix.liftTools(acc, beta)
}

// liftTools adds each touched tool's lift, beta times its server's share
// of the best server's score times the best tool's score, counted as
// loss so that coverage ignores it.
func (ix *Index) liftTools(acc *accumulator, beta float32) {
	best := float32(0)
	for _, x := range acc.srv {
		best = max(best, x)
	}
	top := float32(0)
	for _, d := range acc.touched {
		top = max(top, acc.score[d])
	}
	if best == 0 || top == 0 {
		return
	}
	// A tool's lift depends on its upstream alone: it is worked out once
	// an upstream, the same expression as it would be for each tool.
	acc.lift = grow(acc.lift, len(acc.srv))
	for s, x := range acc.srv {
		acc.lift[s] = beta * x / best * top
	}
	for _, d := range acc.touched {
		if x := acc.lift[ix.servers.of[d]]; x > 0 {
			acc.score[d] += x
			acc.lose(d, x, 0, 1)
		}
	}
}

// anyUpstream reports whether some live tool names its upstream: where
// none does, there are no servers to tell apart.
func (ix *Index) anyUpstream() bool {
	for i := range ix.docs {
		if ix.docs[i].live && ix.docs[i].tool.Upstream != "" {
			return true
		}
	}
	return false
}
