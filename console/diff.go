package console

import "strings"

// diffLine is one line of a diff: Op is ' ' (in both), '-' (only in the
// approved text) or '+' (only in the new one).
type diffLine struct {
	Op   string
	Text string
}

// maxDiffLines bounds each side of a diff: the longest common subsequence
// takes time and memory in the product of the sides' lengths.
const maxDiffLines = 2000

// diff is the line diff of a and b, by their longest common subsequence.
func diff(a, b string) []diffLine {
	x, y := lines(a), lines(b)
	n, m := len(x), len(y)
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case x[i] == y[j]:
			out = append(out, diffLine{" ", x[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffLine{"-", x[i]})
			i++
		default:
			out = append(out, diffLine{"+", y[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffLine{"-", x[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffLine{"+", y[j]})
	}
	return out
}

// lines splits s into at most maxDiffLines lines.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return l[:min(len(l), maxDiffLines)]
}
