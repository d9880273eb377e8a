package routing

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var fitFlag = flag.Bool("fit", false, "refit the score calibration on the shared routing benchmark (see calibrate.go)")

// fitSets are the benchmark sets the calibration is fitted on, each with
// every sample-th query and the share of its queries whose gold top-1
// tool scored at least 0.35 under the former calibration.
var fitSets = [...]struct {
	name   string
	sample int
	kept   float64
}{
	{"bfcl", 1, 0.680},
	{"seal_tools", 1, 0.960},
	{"metatool", 5, 0.445},
}

// fitRow is one ranked tool: its evidence and whether it is wanted.
type fitRow struct {
	set     int
	heldOut bool // ranked without the query's gold tools
	rank    int  // 1-based; 0 for a ranking with no tool at all
	wanted  bool
	e       evidence
}

// TestFitCalibration refits calibIntercept, calibCoverage and
// calibRelative as calibrate.go describes and prints them; it changes
// nothing. It runs only with -fit and the benchmark present.
func TestFitCalibration(t *testing.T) {
	if !*fitFlag {
		t.Skip("run with -fit to refit the calibration")
	}
	dir := fitBenchDir(t)
	var rows []fitRow
	for si, set := range fitSets {
		rows = append(rows, fitRankings(t, filepath.Join(dir, set.name), si, set.sample)...)
	}
	b := fitLogistic(rows)
	ll := fitLikelihood(rows, b)
	fitted := b[0]
	for b[0] < fitted+10 && !keepsGold(rows, b) {
		b[0] += 0.01
	}
	t.Logf("fitted b0 %.3f (mean log-likelihood %.4f), moved by %.2f: calibIntercept = %.3f, calibCoverage = %.3f, calibRelative = %.3f",
		fitted, ll, b[0]-fitted, b[0], b[1], b[2])
	// The trade-off a lower intercept would make: fewer gold top-1 tools
	// kept, more held-out top tools under the floor.
	var tradeOff strings.Builder
	for _, d := range []float64{0, -0.5, -1, -1.5, -2} {
		lower := b
		lower[0] += d
		kept, under := fitShares(rows, lower)
		fmt.Fprintf(&tradeOff, "b0 %+.1f:", d)
		for i, set := range fitSets {
			fmt.Fprintf(&tradeOff, "  %s kept %.3f, held out under the floor %.3f", set.name, kept[i], under[i])
		}
		tradeOff.WriteString("\n")
	}
	t.Logf("trade-off:\n%s", tradeOff.String())
}

// fitShares returns, for each set, the share of queries whose gold top-1
// tool scores at least the threshold under weights b, and the share whose
// held-out top tool scores under the noise floor (or that find nothing).
func fitShares(rows []fitRow, b [3]float64) (kept, under [len(fitSets)]float64) {
	var queries [len(fitSets)]float64
	for _, r := range rows {
		if r.rank > 1 {
			continue
		}
		if !r.heldOut {
			queries[r.set]++
			if r.wanted && fitProbability(b, r.e) >= DefaultThreshold {
				kept[r.set]++
			}
		} else if r.rank == 0 || fitProbability(b, r.e) < DefaultNoiseFloor {
			under[r.set]++
		}
	}
	for i := range queries {
		kept[i] /= max(1, queries[i])
		under[i] /= max(1, queries[i])
	}
	return kept, under
}

// fitBenchDir returns the shared benchmark directory, skipping t when it
// is absent.
func fitBenchDir(t *testing.T) string {
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Skip("module root not found")
		}
		dir = filepath.Dir(dir)
	}
	bench := filepath.Join(dir, "..", "shared", "bench", "routing")
	if _, err := os.Stat(bench); err != nil {
		t.Skip("benchmark data absent")
	}
	return bench
}

// fitRankings ranks every sample-th query of one set twice, with and
// without its gold tools, and returns the top 10 of each.
func fitRankings(t *testing.T, dir string, set, sample int) []fitRow {
	ix := NewIndex(IndexOptions{})
	byUpstream := map[string][]Tool{}
	var order []string
	fitLines(t, filepath.Join(dir, "tools.jsonl"), func(line []byte) error {
		var x struct {
			Name, Description, Server string
			InputSchema               json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(line, &x); err != nil {
			return err
		}
		if _, ok := byUpstream[x.Server]; !ok {
			order = append(order, x.Server)
		}
		byUpstream[x.Server] = append(byUpstream[x.Server], Tool{Name: x.Name, Domain: x.Server, Description: x.Description, InputSchema: x.InputSchema})
		return nil
	})
	for _, up := range order {
		ix.SetUpstream(up, byUpstream[up])
	}
	var rows []fitRow
	n := 0
	fitLines(t, filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		if n++; (n-1)%sample != 0 {
			return nil
		}
		var q struct {
			Query      string
			Gold       []string
			GoldGroups [][]string `json:"gold_groups"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		gold := slices.Concat(append(q.GoldGroups, q.Gold)...)
		for _, held := range []bool{false, true} {
			rank := func() {
				var ev []evidence
				hits := ix.search(nil, q.Query, 10, &ev)
				if len(hits) == 0 {
					rows = append(rows, fitRow{set: set, heldOut: held})
				}
				for i, h := range hits {
					rows = append(rows, fitRow{set: set, heldOut: held, rank: i + 1, wanted: slices.Contains(gold, h.Name), e: ev[i]})
				}
			}
			if held {
				withoutTools(ix, gold, rank)
			} else {
				rank()
			}
		}
		return nil
	})
	return rows
}

func fitLines(t *testing.T, path string, fn func([]byte) error) {
	f, err := os.Open(path)
	if err != nil {
		t.Skipf("benchmark file absent: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			t.Fatalf("%s line %d: %v", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// fitFeatures are the terms of calibrate's linear predictor, intercept
// first.
func fitFeatures(e evidence) [3]float64 {
	return [3]float64{1, math.Log(max(e.coverage, calibMinCover)), e.relative}
}

// fitWeights returns each row's weight in the fit: each set weighs the
// same and, within a set, the held-out rankings as much as the whole
// ones; rankings with no tool weigh nothing.
func fitWeights(rows []fitRow) []float64 {
	var count [len(fitSets)][2]float64
	for _, r := range rows {
		if r.rank > 0 {
			count[r.set][b2i(r.heldOut)]++
		}
	}
	ws := make([]float64, len(rows))
	for i, r := range rows {
		if r.rank > 0 {
			ws[i] = 1 / count[r.set][b2i(r.heldOut)] / float64(2*len(fitSets))
		}
	}
	return ws
}

func fitProbability(b [3]float64, e evidence) float64 {
	x := fitFeatures(e)
	return 1 / (1 + math.Exp(-(b[0]*x[0] + b[1]*x[1] + b[2]*x[2])))
}

// fitLikelihood is the weighted mean log-likelihood of b.
func fitLikelihood(rows []fitRow, b [3]float64) float64 {
	ll := 0.0
	for i, w := range fitWeights(rows) {
		if w == 0 {
			continue
		}
		p := fitProbability(b, rows[i].e)
		if !rows[i].wanted {
			p = 1 - p
		}
		ll += w * math.Log(max(p, 1e-300))
	}
	return ll
}

// fitLogistic fits the weights of fitFeatures by Newton's method.
func fitLogistic(rows []fitRow) [3]float64 {
	ws := fitWeights(rows)
	var b [3]float64
	for range 100 {
		var g [3]float64
		var h [3][3]float64
		for i, r := range rows {
			w := ws[i]
			if w == 0 {
				continue
			}
			x := fitFeatures(r.e)
			p := fitProbability(b, r.e)
			for j := range x {
				g[j] += w * (float64(b2i(r.wanted)) - p) * x[j]
				for k := range x {
					h[j][k] += w * p * (1 - p) * x[j] * x[k]
				}
			}
		}
		step := solve3(h, g)
		for j := range b {
			b[j] += step[j]
		}
		if math.Abs(step[0])+math.Abs(step[1])+math.Abs(step[2]) < 1e-10 {
			break
		}
	}
	return b
}

// keepsGold reports whether weights b keep the gold top-1 tool at the
// threshold or more, on each set, within 0.02 of the former calibration.
func keepsGold(rows []fitRow, b [3]float64) bool {
	kept, _ := fitShares(rows, b)
	for i, set := range fitSets {
		if kept[i] < set.kept-0.02 {
			return false
		}
	}
	return true
}

// solve3 solves h·x = g by Cramer's rule.
func solve3(h [3][3]float64, g [3]float64) [3]float64 {
	det := func(m [3][3]float64) float64 {
		return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
			m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
			m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	}
	d := det(h)
	var x [3]float64
	for j := range x {
		m := h
		for i := range m {
			m[i][j] = g[i]
		}
		x[j] = det(m) / d
	}
	return x
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// withoutTools runs fn with the tools named taken out of ix, as if they
// had never been added, then puts them back.
func withoutTools(ix *Index, names []string, fn func()) {
	saved := map[string][]Tool{}
	ix.mu.RLock()
	for _, name := range names {
		if id, ok := ix.byName[name]; ok {
			if up := ix.docs[id].tool.Upstream; saved[up] == nil {
				for _, d := range ix.byUpstream[up] {
					saved[up] = append(saved[up], ix.docs[d].tool)
				}
			}
		}
	}
	ix.mu.RUnlock()
	for up, tools := range saved {
		ix.SetUpstream(up, slices.DeleteFunc(slices.Clone(tools), func(t Tool) bool { return slices.Contains(names, t.Name) }))
	}
	fn()
	for up, tools := range saved {
		ix.SetUpstream(up, tools)
	}
}
