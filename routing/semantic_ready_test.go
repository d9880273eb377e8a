package routing

// What only the tests use: the semantic index's health.

// Ready reports whether the embedder has worked at least once and has not
// failed since.
func (s *SemanticIndex) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}
