package routing

import (
	"cmp"
	"math"
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
		order, byOrder := make([]int32, n), make([]int32, n)
		for i, o := range rng.Perm(n) {
			order[i], byOrder[o] = int32(o), int32(i)
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
			got := selectTop(acc, ids, scores, k, order, byOrder)
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

// TestSelectSmallest checks that selectSmallest puts the k smallest keys
// first, on keys with many repeats and past the length at which
// samplePivot chooses the first pivot.
func TestSelectSmallest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		keys := make([]uint64, 1+rng.IntN(600))
		for i := range keys {
			keys[i] = uint64(rng.IntN(1 + len(keys)/3))
		}
		sorted := slices.Clone(keys)
		slices.Sort(sorted)
		k := 1 + rng.IntN(len(keys))
		selectSmallest(keys, k)
		got := slices.Clone(keys[:k])
		slices.Sort(got)
		if !slices.Equal(got, sorted[:k]) {
			t.Fatalf("k %d of %d: got %v, want %v", k, len(keys), got, sorted[:k])
		}
	}
}

// TestRankKeyOrdersAsByRank checks that rank keys order as byRank does,
// and that the score and place come back out of a key unchanged.
func TestRankKeyOrdersAsByRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	scores := []float32{math.SmallestNonzeroFloat32, 1e-30, 0.001, 0.5, 1, 1.0000001, 3, 1e30, math.MaxFloat32}
	for range 2000 {
		a := scored{score: scores[rng.IntN(len(scores))] * float32(1+rng.IntN(3)), order: int32(rng.IntN(4))}
		b := scored{score: scores[rng.IntN(len(scores))] * float32(1+rng.IntN(3)), order: int32(rng.IntN(1 << 30))}
		if got, want := cmp.Compare(rankKey(a.score, a.order), rankKey(b.score, b.order)), byRank(a, b); got != want {
			t.Fatalf("%v and %v: keys compare %d, byRank %d", a, b, got, want)
		}
		key := rankKey(a.score, a.order)
		if s, o := math.Float32frombits(^uint32(key>>32)), int32(uint32(key)); s != a.score || o != a.order {
			t.Fatalf("%v: key gives back %v, %v", a, s, o)
		}
	}
}

// byRank is the order selectTop and rankKey follow, written plainly:
// scored documents best first: a higher score first, and on
// equal scores the earlier name.
func byRank(a, b scored) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	}
	return cmp.Compare(a.order, b.order)
}
