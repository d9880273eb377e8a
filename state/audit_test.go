package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/audit"
)

// auditOf is b's audit store, keeping max rows.
func auditOf(t *testing.T, b backend, max int) audit.Store {
	t.Helper()
	switch b := b.(type) {
	case *DB:
		return auditStore{b: b.b, max: max}
	case *PG:
		return auditStore{b: b.b, max: max}
	}
	t.Fatalf("no audit store in %T", b)
	return nil
}

func auditRec(i int) audit.Record {
	return audit.Record{Time: t0.Add(time.Duration(i) * time.Minute), Principal: []string{"token-aaaaaaaaaaaa", "local"}[i%2],
		Session: "s1", Tool: []string{"alpha_echo", "beta_get"}[i%2], Upstream: "alpha", Plan: "p1", Step: fmt.Sprint("step", i),
		Outcome: "ok", Duration: time.Duration(i) * time.Millisecond, RequestBytes: i, ResponseBytes: 2 * i,
		Approval: []string{"", "approved_in_console"}[i%2], Approver: []string{"", "token-bbbbbbbbbbbb"}[i%2]}
}

// Every backend keeps the newest rows up to its bound, and filters by
// time, tool and principal, returning the newest up to the limit, oldest
// first, every field as written.
func TestAuditStoreContract(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		st := auditOf(t, b, 5)
		var all []audit.Record
		for i := range 7 {
			all = append(all, auditRec(i))
		}
		if err := st.Append(ctx, all[:3]); err != nil {
			t.Fatal(err)
		}
		if err := st.Append(ctx, all[3:]); err != nil {
			t.Fatal(err)
		}
		got, err := st.Query(ctx, audit.Filter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all[2:], got); diff != "" {
			t.Errorf("kept past the bound of 5 (-want +got):\n%s", diff)
		}
		for _, tc := range []struct {
			f    audit.Filter
			want []audit.Record
		}{
			{audit.Filter{Tool: "alpha_echo"}, []audit.Record{all[2], all[4], all[6]}},
			{audit.Filter{Principal: "local"}, []audit.Record{all[3], all[5]}},
			{audit.Filter{Since: all[5].Time}, all[5:]},
			{audit.Filter{Limit: 2}, all[5:]},
			{audit.Filter{Tool: "nothing"}, nil},
		} {
			got, err := st.Query(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Query(%+v) (-want +got):\n%s", tc.f, diff)
			}
		}
	})
}
