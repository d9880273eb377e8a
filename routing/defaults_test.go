package routing

import "testing"

// An option reads the same way everywhere: zero takes the default, a
// negative value means zero.
func TestOptionZeroTakesTheDefaultNegativeMeansZero(t *testing.T) {
	o := RouterOptions{TopK: -1, Threshold: -1, CollisionDelta: -1, SemanticWeight: -1, KeepCoverage: -1, AbstainCoverage: -1,
		AbstainCommitment: -1, AbstainAdvice: -1, SameDomain: -1}
	o.defaults()
	if o.TopK != 0 || o.Threshold != 0 || o.CollisionDelta != 0 || o.SemanticWeight != 0 || o.KeepCoverage != 0 || o.AbstainCoverage != 0 ||
		o.AbstainCommitment != 0 || o.AbstainAdvice != 0 {
		t.Errorf("negative options: got %+v, want zeros", o)
	}
	if o.SameDomain != DefaultSameDomain {
		t.Errorf("a negative multiplier: got %v, want the default %v", o.SameDomain, DefaultSameDomain)
	}
	var z RouterOptions
	z.defaults()
	if z.TopK != DefaultTopK || z.Threshold != DefaultThreshold || z.CollisionDelta != DefaultCollisionDelta ||
		z.SemanticWeight != DefaultSemanticWeight || z.KeepCoverage != DefaultKeepCoverage || z.AbstainCoverage != DefaultAbstainCoverage ||
		z.AbstainCommitment != DefaultAbstainCommitment || z.AbstainAdvice != DefaultAbstainAdvice {
		t.Errorf("zero options: got %+v, want the defaults", z)
	}
	set := RouterOptions{TopK: 3, Threshold: 0.5}
	set.defaults()
	if set.TopK != 3 || set.Threshold != 0.5 {
		t.Errorf("set options: got TopK %d, Threshold %v, want 3, 0.5", set.TopK, set.Threshold)
	}
}

// A profile without max_tools, affinities or breaker settings hands the
// router and its sessions zeros; they take 12 tools, 1.15 and 0.7, 3
// discoveries and 2m (docs/reference.md).
func TestUnsetBoundsTakeTheDocumentedDefaults(t *testing.T) {
	r := NewRouter(RouterOptions{})
	s := r.NewSession(SessionOptions{})
	if o := r.Options(); o.SameDomain != 1.15 || o.CrossDomain != 0.7 || s.opts.MaxTools != 12 {
		t.Errorf("got same_domain %v, cross_domain %v, max_tools %d, want 1.15, 0.7 and 12", o.SameDomain, o.CrossDomain, s.opts.MaxTools)
	}
	if b := s.breaker.State(); b.Max != 3 {
		t.Errorf("the breaker: got %+v, want 3 discoveries (fuse.TestBreakerDefaults: and 2m)", b)
	}
}
