// Package defaults fills in an option left unset, the one rule the
// packages' Options share: zero or negative takes the package's default.
package defaults

// Set sets *v to def when it is zero or negative.
func Set[T ~int | ~int64 | ~float64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
