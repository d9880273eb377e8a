package upstream

import (
	"context"
	"time"
)

// drainWait bounds how long a closing hub waits for an upstream's calls
// in flight to end before it closes the connection.
const drainWait = time.Second

// drain, when the hub is closing (ctx done), waits up to drainWait for
// the calls in flight to end, so that the connection stays open until
// their notifications/cancelled are written. mcp-go writes those after
// the call returns, so over stdio it also waits for conn.settled.
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
