package approval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
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

// SEC-15: when four principals fill the queue with their shares, another
// principal's call still waits for the person: the newest call of the
// principal holding most gives up its place, refused as when the queue is
// full, and its older calls keep theirs.
func TestQueueFullOfSharesMakesRoomForAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(8)
		q.Serve()
		ctx, stop := context.WithCancel(t.Context())
		defer stop()
		bumped := make(chan error, 8)
		for p := range 4 {
			for range 2 {
				go func() {
					if _, err := q.Wait(ctx, Request{Tool: "fs_wipe", Principal: fmt.Sprint("heavy", p)}); err != nil {
						bumped <- err
					}
				}()
				synctest.Wait()
				time.Sleep(time.Second) // in the bubble: each call waits since a later time
			}
		}
		oldest := q.Pending()[0]
		go q.Wait(ctx, Request{Tool: "fs_wipe", Principal: "light"})
		synctest.Wait()
		pending := q.Pending()
		if !slices.ContainsFunc(pending, func(r Request) bool { return r.Principal == "light" }) {
			t.Fatalf("pending %+v: the light principal's call does not wait", pending)
		}
		if len(pending) != 8 || pending[0] != oldest {
			t.Errorf("pending %d, oldest %+v; want 8, the oldest still %+v", len(pending), pending[0], oldest)
		}
		select {
		case err := <-bumped:
			if !errors.Is(err, ErrQueueFull) {
				t.Errorf("the call that made room: %v, want ErrQueueFull", err)
			}
		default:
			t.Error("no call gave up its place")
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
