package proxy

// Start-up as people see it: the tools of an upstream that has not
// connected yet, and why they are missing.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// ErrStarting is returned, in an *UpstreamError of KindStarting, for a call
// of a tool whose upstream is still on its first connection attempt.
var ErrStarting = errors.New("still starting")

// awaitTool is for a name not in the catalog. When the name has the prefix
// of an upstream that has not connected yet, it waits up to StartWait for
// that upstream's first attempt to end, and says why the tool is missing
// if it still is: the upstream is still starting, or failed to connect.
// It returns nil when the tool is there now, or is nobody's.
func (h *Hub) awaitTool(ctx context.Context, name string) *UpstreamError {
	deadline := time.Now().Add(h.opts.StartWait)
	if ctx.Value(startWaitedCtxKey{}) != nil {
		deadline = time.Now() // it waited already
	}
	return h.awaitToolUntil(ctx, name, deadline)
}

func (h *Hub) awaitToolUntil(ctx context.Context, name string, deadline time.Time) *UpstreamError {
	u := h.pendingOwner(name)
	if u == nil {
		return nil
	}
	if u.Starting() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case <-u.First():
		case <-t.C:
		case <-ctx.Done():
			return &UpstreamError{Kind: KindCancelled, Upstream: u.Name(), Tool: name, Err: ctx.Err()}
		}
	}
	if _, ok := h.Catalog().Tool(name); ok {
		return nil
	}
	st := u.Status()
	switch {
	case st.Starting:
		err := fmt.Errorf("%w for %s", ErrStarting, time.Since(st.Since).Round(time.Second))
		if st.Doing != "" {
			err = fmt.Errorf("%w (%s)", err, st.Doing)
		}
		return &UpstreamError{Kind: KindStarting, Upstream: u.Name(), Tool: name, Err: fmt.Errorf("%w; try again shortly", err)}
	case st.EverConnected:
		return nil // it connected: the tool is just not one of its
	case st.Cause == nil:
		return &UpstreamError{Kind: KindUnavailable, Upstream: u.Name(), Tool: name, Err: ErrNotConnected}
	case upstream.NeedsLogin(st.Cause):
		return &UpstreamError{Kind: KindAuthRequired, Upstream: u.Name(), Tool: name,
			Err: fmt.Errorf("%w: %w", ErrNotConnected, u.ForModel(st.Cause))}
	default:
		return &UpstreamError{Kind: KindUnavailable, Upstream: u.Name(), Tool: name,
			Err: fmt.Errorf("%w: %w", ErrNotConnected, u.ForModel(st.Cause))}
	}
}

// AwaitTools waits, as a call does, for the upstreams of the named tools
// that are not in the catalog because their upstream is still starting
// (all within one StartWait). It returns why tools are still missing.
func (h *Hub) AwaitTools(ctx context.Context, names []string) error {
	deadline := time.Now().Add(h.opts.StartWait)
	var errs []error
	for _, name := range names {
		if _, ok := h.Catalog().Tool(name); ok {
			continue
		}
		if err := h.awaitToolUntil(ctx, name, deadline); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pendingOwner is the upstream that has never connected (or is still
// publishing its first listing) whose prefix name has (the longest such
// prefix), or nil.
func (h *Hub) pendingOwner(name string) *upstream.Upstream {
	var best *upstream.Upstream
	for _, u := range h.set().list {
		if !strings.HasPrefix(name, u.Config().Prefix) || (best != nil && len(u.Config().Prefix) <= len(best.Config().Prefix)) {
			continue
		}
		if u.NeverConnected() || u.Starting() { // connected, its catalog not yet published
			best = u
		}
	}
	return best
}

// startWaitedCtxKey marks the context of a call that has waited for its
// upstream already (see startWaited).
type startWaitedCtxKey struct{}
