// Package editdist measures how far one spelling is from another: the
// configuration decoder and the catalog use it for "did you mean".
package editdist

// Distance is the optimal-string-alignment distance between a and b, in
// bytes (insertions, deletions, substitutions and swaps of adjacent
// bytes), or limit+1 when it is more than limit. Words shorter than 32
// bytes cost no allocation.
func Distance(a, b string, limit int) int {
	if a == b {
		return 0
	}
	var buf [3 * 32]int
	n := len(b) + 1
	rows := buf[:]
	if 3*n > len(buf) {
		rows = make([]int, 3*n)
	}
	prev2, prev, cur := rows[:n], rows[n:2*n], rows[2*n:3*n]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], limit+1)
}
