package proxy

// Start-up as people see it: the tools of upstreams not connected yet.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// ErrStarting is returned for a call of a tool whose upstream is still on
// its first connection attempt.
var ErrStarting = errors.New("still starting")

// resolve resolves a call's tool to its upstream for the start-wait stage,
// waiting up to StartWait for an upstream still starting (not connected
// yet, or restarted for an edit and listing its tools from before).
func (h *Hub) resolve(ctx context.Context, c *call.Call) error {
	if err := h.closing(c); err != nil {
		return err
	}
	t, ok := h.Catalog().Tool(c.Tool)
	if !ok {
		if err := h.awaitTool(ctx, c.Tool, c.StartWaited); err != nil {
			c.Upstream = err.Upstream
			return err
		}
		if t, ok = h.Catalog().Tool(c.Tool); !ok {
			return &UpstreamError{Kind: call.KindUnknownTool, Tool: c.Tool,
				Err: fmt.Errorf("%w%s", ErrUnknownTool, didYouMean(h.Catalog().Suggest(c.Tool)))}
		}
	}
	c.Upstream = t.Upstream
	u := h.set().byName[t.Upstream]
	if u == nil { // removed or disabled by an edit, its catalog not rebuilt yet
		if err := h.disabledOwner(c.Tool); err != nil {
			return err
		}
		return removed(c)
	}
	if u.Starting() { // restarted for an edit, listed from the run before (Apply)
		if err := h.awaitTool(ctx, c.Tool, c.StartWaited); err != nil {
			return err
		}
	}
	return nil
}

// awaitTool is for a name not in the catalog: when it has the prefix of an
// upstream not connected yet, it waits up to StartWait for its first
// attempt (not at all when the call waited already), and says why the
// tool is still missing; nil when it is there now, or is nobody's.
func (h *Hub) awaitTool(ctx context.Context, name string, waited bool) *UpstreamError {
	deadline := time.Now().Add(h.opts.StartWait)
	if waited {
		deadline = time.Now()
	}
	return h.awaitToolUntil(ctx, name, deadline)
}

func (h *Hub) awaitToolUntil(ctx context.Context, name string, deadline time.Time) *UpstreamError {
	u := h.pendingOwner(name)
	if u == nil {
		return h.disabledOwner(name)
	}
	if u.Starting() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		select {
		case <-u.First():
		case <-t.C:
		case <-ctx.Done():
			return &UpstreamError{Kind: call.KindCancelled, Upstream: u.Name(), Tool: name, Err: ctx.Err()}
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
		return &UpstreamError{Kind: call.KindStarting, Upstream: u.Name(), Tool: name, Err: fmt.Errorf("%w; try again shortly", err)}
	case st.EverConnected:
		return nil // it connected: the tool is just not one of its
	case st.Cause == nil:
		return &UpstreamError{Kind: call.KindUnavailable, Upstream: u.Name(), Tool: name, Err: upstream.ErrNotConnected}
	case upstream.NeedsLogin(st.Cause):
		return &UpstreamError{Kind: call.KindAuthRequired, Upstream: u.Name(), Tool: name,
			Err: fmt.Errorf("%w: %w", upstream.ErrNotConnected, u.ForModel(st.Cause))}
	default:
		return &UpstreamError{Kind: call.KindUnavailable, Upstream: u.Name(), Tool: name,
			Err: fmt.Errorf("%w: %w", upstream.ErrNotConnected, u.ForModel(st.Cause))}
	}
}

// awaitNames waits, as a call does, for the upstreams still starting of
// the named tools not in the catalog, and returns why names still miss.
func (h *Hub) awaitNames(ctx context.Context, names []string) []*UpstreamError {
	deadline := time.Now().Add(h.opts.StartWait)
	var errs []*UpstreamError
	for _, name := range names {
		if _, ok := h.Catalog().Tool(name); ok {
			continue
		}
		if err := h.awaitToolUntil(ctx, name, deadline); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// AwaitBuiltins waits, at most InitTimeout, until every built-in upstream
// has joined the catalog or failed, so that a gateway shows them from a
// client's first request.
func (h *Hub) AwaitBuiltins(ctx context.Context) {
	builtins := slices.DeleteFunc(slices.Clone(h.set().list),
		func(u *upstream.Upstream) bool { return u.Config().Transport != TransportBuiltin })
	h.awaitFirst(ctx, builtins, time.Now().Add(h.opts.InitTimeout))
}

// awaitFirst waits until the first attempt of each of ups has ended, the
// deadline passed or ctx ended.
func (h *Hub) awaitFirst(ctx context.Context, ups []*upstream.Upstream, deadline time.Time) {
	if len(ups) == 0 {
		return
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for _, u := range ups {
		select {
		case <-u.First():
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// starting is the upstreams still on their first attempt, which ends after
// the catalog took their tools in.
func (h *Hub) starting() []*upstream.Upstream {
	var out []*upstream.Upstream
	for _, u := range h.set().list {
		if u.Starting() {
			out = append(out, u)
		}
	}
	return out
}

// pendingOwner is the upstream with the longest prefix of name that has
// never connected (or is still publishing its first listing), or nil.
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

// pendingServer is a configured upstream whose tools are not in the catalog.
type pendingServer struct {
	Name  string
	State string // pendingStarting, failed, or the state that keeps it out
	About string // what it is for, as configured
}

// pendingStarting is the state of a pending server on its first attempt.
const pendingStarting = "starting"

// pendingServers is every upstream whose tools are not in the catalog
// because it has not connected in this run, as the instructions name them.
func (h *Hub) pendingServers() []pendingServer {
	var out []pendingServer
	for _, u := range h.set().list {
		st := u.Status()
		if st.EverConnected || st.State == StateConnected {
			continue
		}
		state := string(st.State)
		switch {
		case st.Starting:
			state = pendingStarting
		case st.State == StateConnecting:
			state = "retrying"
		}
		out = append(out, pendingServer{Name: u.Name(), State: state, About: u.Config().Description})
	}
	for _, d := range h.disabledNow().list {
		out = append(out, pendingServer{Name: d.Name, State: strings.TrimSuffix("disabled, "+d.Reason, ", "), About: d.Description})
	}
	return out
}
