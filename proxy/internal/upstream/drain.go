package upstream

import (
	"context"
	"time"
)

// drainWait bounds how long a closing hub waits for an upstream's calls
// in flight to end before it closes the connection.
const drainWait = time.Second

// drain, when the hub is closing (ctx done), waits up to drainWait for
// the upstream's calls in flight to end. A call whose caller was
// cancelled (the gateway got SIGTERM, the client went away) ends at once,
// once it has sent the upstream notifications/cancelled; waiting for it
// keeps the connection, and a stdio child's stdin, open until that
// notification is written. A connection that was lost has nothing to
// drain.
//
// mcp-go writes a cancellation after the call has returned, so over stdio
// drain then waits for every request to be answered or its cancellation
// written (conn.settled).
func (u *Upstream) drain(ctx context.Context, c *Conn) {
	if ctx.Err() == nil {
		return
	}
	deadline := time.NewTimer(drainWait)
	defer deadline.Stop()
	taken := 0
	defer func() {
		for range taken {
			<-u.slots
		}
	}()
	for taken < cap(u.slots) {
		select {
		case u.slots <- struct{}{}: // a slot no call holds
			taken++
		case <-deadline.C:
			return
		}
	}
	if c.settled == nil {
		return
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !c.settled() {
		select {
		case <-tick.C:
		case <-deadline.C:
			return
		case <-c.lost:
			return
		}
	}
}
