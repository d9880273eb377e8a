package routing

import (
	"math"
	"slices"
	"testing"
)

// boostSignal adds a fixed score to one tool, none of it counted as the
// tool matching the request.
type boostSignal struct {
	tool string
	by   float32
}

func (b boostSignal) score(ix *Index, acc *accumulator, rq *resolvedQuery) {
	if doc, ok := ix.byName[b.tool]; ok {
		acc.add(doc, b.by, 0, rq.nseg)
		acc.lose(doc, b.by, 0, rq.nseg)
	}
}

// TestSignalFusesIntoRankingNotCoverage pins the scoring seam: a signal
// put in the list reorders the ranking, and what it adds as loss leaves
// the tool's coverage of the request as the other signals made it.
func TestSignalFusesIntoRankingNotCoverage(t *testing.T) {
	ix := lexIndex(IndexOptions{}, "files", lexFiles, "mail", lexMail)
	const q = "read the file from disk"
	before := ix.Search(q, 0)
	if len(before) == 0 || before[0].Name != "read_file" {
		t.Fatalf("without the signal: got %v, want read_file first", lexNames(before))
	}
	saved := signals
	signals = append(slices.Clone(signals), boostSignal{tool: "write_file", by: 100})
	defer func() { signals = saved }()
	after := ix.Search(q, 0)
	if len(after) == 0 || after[0].Name != "write_file" {
		t.Fatalf("with the signal: got %v, want write_file first", lexNames(after))
	}
	cov := func(hits []Hit, name string) float64 {
		i := slices.IndexFunc(hits, func(h Hit) bool { return h.Name == name })
		if i < 0 {
			t.Fatalf("%s not ranked in %v", name, lexNames(hits))
		}
		return hits[i].Coverage
	}
	// Within float32 rounding of adding and taking away the boost.
	if got, want := cov(after, "write_file"), cov(before, "write_file"); math.Abs(got-want) > 1e-3 {
		t.Errorf("write_file coverage with the signal: got %.3f, want %.3f (the signal's score is not a match)", got, want)
	}
}
