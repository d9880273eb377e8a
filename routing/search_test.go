package routing

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSelectTopMatchesFullSort checks selectTop against sorting every
// scored document by byRank, on scores with many ties (as replicated
// tools give), zeros (untouched documents) and every k.
func TestSelectTopMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	acc := &accumulator{}
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		order := make([]int32, n)
		for i, o := range rng.Perm(n) {
			order[i] = int32(o)
		}
		scores := make([]float32, n)
		levels := 1 + rng.IntN(20) // few levels: many ties
		var ids []int32
		for d := range n {
			if rng.IntN(4) > 0 {
				scores[d] = float32(rng.IntN(levels)) / 4
				ids = append(ids, int32(d))
			}
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		var want []scored
		for _, d := range ids {
			if scores[d] > 0 {
				want = append(want, scored{doc: d, score: scores[d], order: order[d]})
			}
		}
		slices.SortFunc(want, byRank)
		for _, k := range []int{-1, 0, 1, 2, 5, 20, 50, n, n + 1} {
			got := selectTop(acc, ids, scores, k, order)
			w := want
			if k > 0 && k < len(w) {
				w = w[:k]
			}
			if !slices.Equal(got, w) {
				t.Fatalf("trial %d, k %d: got %v, want %v", trial, k, got, w)
			}
		}
	}
}

func TestKthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		xs := make([]float32, 1+rng.IntN(600)) // past 4*pivotSamples, samplePivot chooses the first pivot
		for i := range xs {
			xs[i] = float32(rng.IntN(1 + len(xs)/3))
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		slices.Reverse(sorted)
		k := 1 + rng.IntN(len(xs))
		if got := kthLargest(xs, k); got != sorted[k-1] {
			t.Fatalf("k %d of %v: got %v, want %v", k, sorted, got, sorted[k-1])
		}
	}
}
