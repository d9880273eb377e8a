package call

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-router/mcp-router/state"
)

func TestCheckQuota(t *testing.T) {
	for _, tc := range []struct {
		q    Quota
		want string
	}{
		{Quota{Principal: "*", Tool: "*", CallsPerMinute: 1}, ""},
		{Quota{Principal: "", Tool: "*", CallsPerMinute: 1}, "principal is empty"},
		{Quota{Principal: "*", Tool: "[", CallsPerMinute: 1}, "not a valid glob"},
		{Quota{Principal: "*", Tool: "*"}, "neither"},
	} {
		err := CheckQuota(tc.q)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckQuota(%+v) = %v, want %q", tc.q, err, tc.want)
		}
	}
}

// A calls-per-minute quota refills over the minute: with 2 a minute, a
// refused principal may call again 30 s later, once, and the refusal
// says how long to wait. A refused call takes nothing from the count.
func TestQuotaRefillsOverTheMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		qs := newQuotas([]Quota{{Principal: "*", Tool: "*", CallsPerMinute: 2}}, nil, nil)
		for i := range 2 {
			release, err := qs.acquire(t.Context(), "p", "t")
			if err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
			release()
		}
		_, err := qs.acquire(t.Context(), "p", "t")
		if err == nil || err.RetryAfter <= 29*time.Second || err.RetryAfter > 31*time.Second {
			t.Fatalf("third call: %v, want refused with a retry after about 30s", err)
		}
		if !strings.HasSuffix(err.Error(), "retry after 31 seconds") {
			t.Errorf("the refusal %q does not say how long to wait as a person would", err)
		}
		time.Sleep(30 * time.Second)
		if _, err := qs.acquire(t.Context(), "p", "t"); err != nil {
			t.Fatalf("a call 30s later: %v", err)
		}
		if _, err := qs.acquire(t.Context(), "p", "t"); err == nil {
			t.Fatal("a second call 30s later was admitted, want refused")
		}
	})
}

// With a shared counter (replicas on one state store), the calls per
// minute of a principal count together across gateways, in fixed
// windows: 3 a minute is 3 in all, the refusal says when the window ends,
// and the next window admits again. Concurrent caps stay per gateway.
func TestQuotaSharedAcrossGateways(t *testing.T) {
	shared := memState(t).Quotas()
	list := []Quota{{Principal: "*", Tool: "*", CallsPerMinute: 3, Concurrent: 1}}
	now := time.Date(2026, 7, 28, 10, 0, 15, 0, time.UTC)
	a, b := newQuotas(list, shared, nil), newQuotas(list, shared, nil)
	a.now, b.now = func() time.Time { return now }, func() time.Time { return now }
	for i, qs := range []*quotas{a, b, a} {
		release, err := qs.acquire(t.Context(), "p", "t")
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		release()
	}
	_, err := b.acquire(t.Context(), "p", "t")
	if err == nil || err.RetryAfter < 44*time.Second || err.RetryAfter > 46*time.Second {
		t.Fatalf("fourth call on the other gateway: %v, want refused until the minute ends (45s)", err)
	}
	if _, err := a.acquire(t.Context(), "q", "t"); err != nil {
		t.Errorf("another principal: %v", err)
	}
	now = now.Add(45 * time.Second)
	holdA, err := a.acquire(t.Context(), "p", "t")
	if err != nil {
		t.Fatalf("next window: %v", err)
	}
	defer holdA()
	holdB, err := b.acquire(t.Context(), "p", "t")
	if err != nil {
		t.Fatalf("a call on the other gateway while one runs on the first (concurrent caps are per gateway): %v", err)
	}
	holdB()
}

func memState(t testing.TB) *state.DB {
	t.Helper()
	db, err := state.OpenMemory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
