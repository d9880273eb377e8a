package approval

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
)

// SEC-15: one principal's calls hold at most a quarter of the console's
// queue: a client whose model fills its share is refused at once, and
// another principal's call still waits for the person.
func TestQueueBoundsEachPrincipal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(8)
		q.Serve()
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		for range 2 {
			go q.Wait(ctx, Request{Tool: "fs_wipe", Principal: "greedy"})
		}
		synctest.Wait()
		_, err := q.Wait(ctx, Request{Tool: "fs_wipe", Principal: "greedy"})
		if !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), "this principal") {
			t.Fatalf("a third call of one principal: got %v, want ErrQueueFull for this principal", err)
		}
		go q.Wait(ctx, Request{Tool: "fs_wipe", Principal: "other"})
		synctest.Wait()
		if n := len(q.Pending()); n != 3 {
			t.Errorf("pending %d, want the greedy principal's 2 and the other's 1", n)
		}
	})
}

// A call whose client went away leaves the queue: it is no longer listed,
// and answering it is ErrNotPending.
func TestQueueDropsACancelledCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(0)
		q.Serve()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := q.Wait(ctx, Request{Tool: "fs_wipe", Principal: "p"})
			done <- err
		}()
		synctest.Wait()
		pending := q.Pending()
		if len(pending) != 1 {
			t.Fatalf("pending %d, want 1", len(pending))
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("the waiting call ended with %v, want context.Canceled", err)
		}
		if n := len(q.Pending()); n != 0 {
			t.Errorf("pending %d after the client went away, want 0", n)
		}
		if err := q.Answer(pending[0].ID, true, "admin"); !errors.Is(err, ErrNotPending) {
			t.Errorf("answering a call that went away: got %v, want ErrNotPending", err)
		}
	})
}
