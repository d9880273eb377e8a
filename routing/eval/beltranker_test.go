package eval

import (
	"context"
	"slices"

	"github.com/mcp-router/mcp-router/routing"
)

// BeltRanker ranks with what a discovery hands over: each query is one
// request_more_tools call ({"query": ...}) in a fresh session of Router,
// and its "ranking" is the selection put on the belt, in order, so that
// R@5 and C@5 read what the model is given, not what the ranking behind
// it found. It counts the tools handed over.
type BeltRanker struct {
	Router *routing.Router
	// Sizes holds the number of tools each query was handed, in order.
	Sizes []int
}

var _ Ranker = (*BeltRanker)(nil)

// Rank returns the selection of one discovery; k is ignored, the
// selection is what it is.
func (b *BeltRanker) Rank(query string, _ int) []string {
	s := b.Router.NewSession(routing.SessionOptions{})
	d, err := s.Discover(context.Background(), routing.Request{Query: query})
	if err != nil {
		b.Sizes = append(b.Sizes, 0)
		return nil
	}
	names := make([]string, len(d.Selected))
	for i, c := range d.Selected {
		names[i] = c.Name
	}
	b.Sizes = append(b.Sizes, len(names))
	return names
}

// SizeStats returns the median number of tools handed over and the share
// of queries handed none.
func (b *BeltRanker) SizeStats() (median int, none float64) {
	if len(b.Sizes) == 0 {
		return 0, 0
	}
	s := slices.Sorted(slices.Values(b.Sizes))
	n := 0
	for _, x := range s {
		if x == 0 {
			n++
		}
	}
	return s[len(s)/2], float64(n) / float64(len(s))
}

// RouterOver returns a router over tools, one SetUpstream per upstream,
// configured by opts.
func RouterOver(tools []routing.Tool, opts routing.RouterOptions) *routing.Router {
	r := routing.NewRouter(opts)
	byUp := map[string][]routing.Tool{}
	var order []string
	for _, t := range tools {
		if _, ok := byUp[t.Upstream]; !ok {
			order = append(order, t.Upstream)
		}
		byUp[t.Upstream] = append(byUp[t.Upstream], t)
	}
	for _, up := range order {
		r.SetUpstream(up, byUp[up])
	}
	return r
}
