package upstream

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// idleContext is a call's deadlines (FI-06): done when its parent is, once
// idle passes without a touch (a progress report), or at its hard
// deadline, with context.DeadlineExceeded. One timer for whichever limit
// comes first and an AfterFunc on the parent end it, with no goroutine.
type idleContext struct {
	context.Context // the parent
	idle            time.Duration
	hard            time.Duration
	hardAt          time.Time // the hard deadline; zero for none
	done            chan struct{}
	alive           func() bool // asked when idle runs out: true restarts it (withConnectLimit)

	mu      sync.Mutex
	err     error
	touched bool
	hardOut bool // the hard deadline ended it
	timer   *time.Timer
	unhook  func() bool // removes the AfterFunc from the parent
}

// withCallTimeouts returns a context that ends idle after the last touch,
// hard after it starts (none when hard <= 0), or with parent.
func withCallTimeouts(parent context.Context, idle, hard time.Duration) (*idleContext, context.CancelFunc) {
	c := &idleContext{Context: parent, idle: idle, hard: hard, done: make(chan struct{})}
	c.mu.Lock()
	wait := idle
	if hard > 0 {
		c.hardAt = time.Now().Add(hard)
		wait = min(wait, hard)
	}
	c.timer = time.AfterFunc(wait, c.fire)
	c.mu.Unlock()
	c.unhook = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c, func() {
		c.unhook()
		c.end(context.Canceled)
	}
}

// fire ends c when its timer runs out, unless alive says to wait on.
func (c *idleContext) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.hardOut = !c.hardAt.IsZero() && !time.Now().Before(c.hardAt)
	if !c.hardOut && c.alive != nil && c.alive() {
		c.restartLocked()
		return
	}
	c.endLocked(context.DeadlineExceeded)
}

// restartLocked starts the idle time again, never past the hard deadline.
func (c *idleContext) restartLocked() {
	c.touched = true
	wait := c.idle
	if !c.hardAt.IsZero() {
		wait = min(wait, time.Until(c.hardAt))
	}
	c.timer.Reset(wait)
}

func (c *idleContext) Done() <-chan struct{} { return c.done }

func (c *idleContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Deadline is the hard deadline, or the parent's when that is earlier.
func (c *idleContext) Deadline() (time.Time, bool) {
	d, ok := c.Context.Deadline()
	if !c.hardAt.IsZero() && (!ok || c.hardAt.Before(d)) {
		return c.hardAt, true
	}
	return d, ok
}

// touch starts the idle time again.
func (c *idleContext) touch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.restartLocked()
	}
}

// idleOut says whether the idle time ran out, and whether a touch came.
func (c *idleContext) idleOut() (out, touched bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == context.DeadlineExceeded && !c.hardOut && c.Context.Err() == nil, c.touched
}

func (c *idleContext) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(err)
}

func (c *idleContext) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	c.timer.Stop()
	close(c.done)
}

// newCallDeadline bounds a call to cfg's limits; cancel releases them.
func newCallDeadline(ctx context.Context, cfg Config) (*idleContext, context.CancelFunc) {
	return withCallTimeouts(ctx, cfg.EffectiveCallTimeout(), cfg.EffectiveMaxTimeout())
}

// expired returns the timeout error when a limit cut the call (and not
// the caller going away), or nil.
func (c *idleContext) expired(caller context.Context) error {
	if caller.Err() != nil {
		return nil
	}
	if out, touched := c.idleOut(); out {
		return &TimeoutError{limit: c.idle, afterProgress: touched}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hardOut {
		return &TimeoutError{limit: c.hard, hard: true}
	}
	return nil
}

// TimeoutError is a call cut by the idle timeout or the hard maximum.
type TimeoutError struct {
	limit         time.Duration
	hard          bool // the hard maximum (max_timeout), not the idle timeout
	afterProgress bool // the idle timeout, counted from a progress report
}

func (e *TimeoutError) Error() string {
	switch {
	case e.hard:
		return fmt.Sprintf("no answer within the hard maximum of %s (max_timeout)", e.limit)
	case e.afterProgress:
		return fmt.Sprintf("no answer within %s of its last progress report", e.limit)
	default:
		return fmt.Sprintf("no answer within %s", e.limit)
	}
}

// Unwrap makes the error a context.DeadlineExceeded, as any timeout.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

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
