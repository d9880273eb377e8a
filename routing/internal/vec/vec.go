// Package vec holds the vector arithmetic of embeddings, shared by the
// routing package's semantic index and by its lessons.
package vec

import "math"

// Unit scales v to unit length in place and returns it; a zero vector
// stays zero (its cosine with anything is then 0, "unrelated"), and so
// does one whose length is not finite.
func Unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) {
		clear(v)
		return v
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return v
}

// Dot returns the dot product of a and b (their cosine when both are
// unit vectors); 0 for vectors of different lengths.
func Dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}
