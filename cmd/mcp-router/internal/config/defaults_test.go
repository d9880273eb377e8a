package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/routing"
)

// A profile that sets no routing gets the routing package's own defaults:
// those whose 0 the file may write resolved here, the others (the
// affinities, the fuse policy; max_tools and the breaker, whose defaults
// routing's session and fuse's breaker apply) left zero for the router.
func TestRoutingDefaultsComeFromThePackages(t *testing.T) {
	r := loadProfile(t, "profiles:\n  p: {}\n", nil).Routing
	if r.TopK != routing.DefaultTopK || r.Threshold != routing.DefaultThreshold ||
		r.CollisionDelta != routing.DefaultCollisionDelta || r.SemanticWeight != routing.DefaultSemanticWeight ||
		r.AbstainCoverage != routing.DefaultAbstainCoverage || r.AbstainCommitment != routing.DefaultAbstainCommitment || r.AbstainAdvice != routing.DefaultAbstainAdvice || r.KeepCoverage != routing.DefaultKeepCoverage ||
		r.MaxTools != 0 || r.MaxDiscoveries != 0 || r.ResetAfter != 0 ||
		!slices.Equal(r.DiscoveryPrefixes, routing.DefaultDiscoveryPrefixes) {
		t.Errorf("got %+v, want the routing package's defaults", r)
	}
	if o := routing.NewRouter(r.RouterOptions).Options(); o.SameDomain != routing.DefaultSameDomain || o.CrossDomain != routing.DefaultCrossDomain ||
		!cmp.Equal(*o.Fuse, routing.DefaultFusePolicy()) || o.TopK != routing.DefaultTopK {
		t.Errorf("the router's options: got %+v, want the routing package's defaults", o)
	}
	r.DiscoveryPrefixes[0] = "changed"
	if routing.DefaultDiscoveryPrefixes[0] == "changed" {
		t.Error("a profile's discovery prefixes share the package default's array")
	}
}

// A 0 written in the file is kept as 0, not replaced by the default,
// except for the affinity multipliers, where 0 is refused with the key.
func TestRoutingZeroMeansZero(t *testing.T) {
	r := loadProfile(t, "profiles:\n  p:\n    routing: {top_k: 0, threshold: 0, collision_delta: 0, semantic_weight: 0, keep_coverage: 0, abstain_commitment: 0, abstain_advice: 0}\n", nil).Routing
	if r.TopK != 0 || r.Threshold != 0 || r.CollisionDelta != 0 || r.SemanticWeight != 0 || r.KeepCoverage != 0 || r.AbstainCommitment != 0 || r.AbstainAdvice != 0 {
		t.Errorf("got %+v, want the zeros as written", r)
	}
	for _, key := range []string{"same_domain", "cross_domain"} {
		_, err := load(t, "profiles:\n  p:\n    routing: {affinity: {"+key+": 0}}\n", nil)
		if err == nil || !strings.Contains(err.Error(), "profiles.p.routing.affinity."+key) || !strings.Contains(err.Error(), "above 0") {
			t.Errorf("%s: 0: got %v, want an error naming the key", key, err)
		}
	}
}
