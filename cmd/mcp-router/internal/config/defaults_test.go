package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/routing"
)

// A profile that sets no routing hands the router, its sessions and
// breakers zeros, and the router the routing package's own defaults
// (routing's TestUnsetBoundsTakeTheDocumentedDefaults and fuse's
// TestBreakerDefaults pin the session's and the breaker's).
func TestRoutingDefaultsComeFromThePackages(t *testing.T) {
	r := loadProfile(t, "profiles:\n  p: {}\n", nil).Routing
	if r.TopK != 0 || r.Threshold != 0 || r.SameDomain != 0 || r.Fuse != nil || r.MaxTools != 0 || r.MaxDiscoveries != 0 || r.ResetAfter != 0 ||
		!slices.Equal(r.DiscoveryPrefixes, routing.DefaultDiscoveryPrefixes) {
		t.Errorf("got %+v, want zeros and the default discovery prefixes", r)
	}
	if o := routing.NewRouter(r.RouterOptions).Options(); o.TopK != routing.DefaultTopK || o.Threshold != routing.DefaultThreshold ||
		o.SameDomain != routing.DefaultSameDomain || o.CrossDomain != routing.DefaultCrossDomain ||
		o.CollisionDelta != routing.DefaultCollisionDelta || o.SemanticWeight != routing.DefaultSemanticWeight ||
		o.AbstainCoverage != routing.DefaultAbstainCoverage || o.AbstainCommitment != routing.DefaultAbstainCommitment ||
		o.AbstainAdvice != routing.DefaultAbstainAdvice || o.KeepCoverage != routing.DefaultKeepCoverage ||
		!cmp.Equal(*o.Fuse, routing.DefaultFusePolicy()) {
		t.Errorf("the router's options: got %+v, want the routing package's defaults", o)
	}
	r.DiscoveryPrefixes[0] = "changed"
	if routing.DefaultDiscoveryPrefixes[0] == "changed" {
		t.Error("a profile's discovery prefixes share the package default's array")
	}
}

// A 0 written in the file is kept as 0 by the router, not replaced by the
// default, except for the affinity multipliers, where 0 is refused with
// the key.
func TestRoutingZeroMeansZero(t *testing.T) {
	p := loadProfile(t, "profiles:\n  p:\n    routing: {top_k: 0, threshold: 0, collision_delta: 0, semantic_weight: 0, keep_coverage: 0, abstain_commitment: 0, abstain_advice: 0}\n", nil).Routing
	if r := routing.NewRouter(p.RouterOptions).Options(); r.TopK != 0 || r.Threshold != 0 || r.CollisionDelta != 0 || r.SemanticWeight != 0 || r.KeepCoverage != 0 || r.AbstainCommitment != 0 || r.AbstainAdvice != 0 {
		t.Errorf("got %+v, want the zeros as written", r)
	}
	for _, key := range []string{"same_domain", "cross_domain"} {
		_, err := load(t, "profiles:\n  p:\n    routing: {affinity: {"+key+": 0}}\n", nil)
		if err == nil || !strings.Contains(err.Error(), "profiles.p.routing.affinity."+key) || !strings.Contains(err.Error(), "above 0") {
			t.Errorf("%s: 0: got %v, want an error naming the key", key, err)
		}
	}
}
