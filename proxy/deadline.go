package proxy

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A call's deadlines (FI-06): the upstream's Timeout is an idle timeout
// that each progress report for the call starts again, under the hard
// maximum MaxTimeout. Either one ends the call's context as a deadline
// does (context.DeadlineExceeded), so the upstream is told as for any
// timeout.

// idleContext is done when its parent is, or once idle passes without a
// touch. It needs no goroutine of its own: a timer, and an AfterFunc on
// the parent, end it. context.Cause of it is its parent's (nil while the
// parent lives); nothing on a call's path reads it.
type idleContext struct {
	context.Context // the parent
	idle            time.Duration
	done            chan struct{}

	mu      sync.Mutex
	err     error
	touched bool
	timer   *time.Timer
	unhook  func() bool // removes the AfterFunc from the parent
}

// withIdleTimeout returns a context that ends idle after the last touch,
// or with parent; cancel releases it.
func withIdleTimeout(parent context.Context, idle time.Duration) (*idleContext, context.CancelFunc) {
	c := &idleContext{Context: parent, idle: idle, done: make(chan struct{})}
	c.mu.Lock()
	c.timer = time.AfterFunc(idle, func() { c.end(context.DeadlineExceeded) })
	c.mu.Unlock()
	c.unhook = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c, func() {
		c.unhook()
		c.end(context.Canceled)
	}
}

func (c *idleContext) Done() <-chan struct{} { return c.done }

func (c *idleContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// touch starts the idle time again; once ended it does nothing.
func (c *idleContext) touch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.touched = true
		c.timer.Reset(c.idle)
	}
}

// idleOut says whether the idle time ran out (rather than the parent
// ending), and whether a touch came before.
func (c *idleContext) idleOut() (out, touched bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err == context.DeadlineExceeded && c.Context.Err() == nil, c.touched
}

func (c *idleContext) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	c.timer.Stop()
	close(c.done)
}

// callDeadline is one call's context under both limits.
type callDeadline struct {
	hard context.Context // the caller's context under the hard maximum
	idle *idleContext
	cfg  UpstreamConfig
}

// newCallDeadline bounds a call to cfg's limits; cancel releases them.
func newCallDeadline(ctx context.Context, cfg UpstreamConfig) (*callDeadline, context.CancelFunc) {
	hard, cancelHard := context.WithTimeout(ctx, cfg.maxTimeout())
	idle, cancelIdle := withIdleTimeout(hard, cfg.callTimeout())
	return &callDeadline{hard: hard, idle: idle, cfg: cfg}, func() {
		cancelIdle()
		cancelHard()
	}
}

// expired returns the timeout error when a limit cut the call (and not
// the caller going away), or nil.
func (d *callDeadline) expired(caller context.Context) error {
	if caller.Err() != nil {
		return nil
	}
	if d.hard.Err() != nil {
		return &timeoutError{limit: d.cfg.maxTimeout(), hard: true}
	}
	if out, touched := d.idle.idleOut(); out {
		return &timeoutError{limit: d.cfg.callTimeout(), afterProgress: touched}
	}
	return nil
}

// timeoutError is a call cut by the idle timeout or the hard maximum.
type timeoutError struct {
	limit         time.Duration
	hard          bool // the hard maximum (max_timeout), not the idle timeout
	afterProgress bool // the idle timeout, counted from a progress report
}

func (e *timeoutError) Error() string {
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
func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }
