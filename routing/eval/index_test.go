package eval

import "github.com/mcp-router/mcp-router/routing"

// BuildIndex returns an index of tools, one SetUpstream per upstream.
func BuildIndex(tools []routing.Tool, opts routing.IndexOptions) *routing.Index {
	ix := routing.NewIndex(opts)
	byUpstream := map[string][]routing.Tool{}
	var order []string
	for _, t := range tools {
		if _, ok := byUpstream[t.Upstream]; !ok {
			order = append(order, t.Upstream)
		}
		byUpstream[t.Upstream] = append(byUpstream[t.Upstream], t)
	}
	for _, up := range order {
		ix.SetUpstream(up, byUpstream[up])
	}
	return ix
}

// IndexRanker ranks with a routing.Index.
type IndexRanker struct{ Index *routing.Index }

var _ Ranker = IndexRanker{}

// Rank returns the names of the k best tools for query.
func (r IndexRanker) Rank(query string, k int) []string {
	hits := r.Index.Search(query, k)
	names := make([]string, len(hits))
	for i, h := range hits {
		names[i] = h.Name
	}
	return names
}
