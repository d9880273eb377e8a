package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// upstreamSet is the hub's upstreams, sorted by name; Apply replaces it
// whole, so a reader holds one consistent set.
type upstreamSet struct {
	list   []*upstream.Upstream
	byName map[string]*upstream.Upstream
}

func (s *upstreamSet) add(u *upstream.Upstream) {
	s.list = append(s.list, u)
	s.byName[u.Name()] = u
}

func (s *upstreamSet) sorted() *upstreamSet {
	slices.SortFunc(s.list, func(a, b *upstream.Upstream) int { return strings.Compare(a.Name(), b.Name()) })
	return s
}

// has reports whether u itself (not another run of its name) is in s.
func (s *upstreamSet) has(u *upstream.Upstream) bool { return s.byName[u.Name()] == u }

func (h *Hub) set() *upstreamSet { return h.ups.Load() }

// run is one upstream's loop: cancel stops it, done is closed when it ended.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// runLocked starts u's loop, with h.mu held; Close stops it.
func (h *Hub) runLocked(ctx context.Context, u *upstream.Upstream) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &run{cancel: cancel, done: make(chan struct{})}
	h.runs[u] = r
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer close(r.done)
		u.Run(ctx)
	}()
}

// Change is what an Apply did, each list sorted by name.
type Change struct {
	Added, Removed, Restarted []string
}

// Empty reports whether the Apply changed no upstream.
func (c Change) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Restarted) == 0 }

// ErrHubNotRunning is the error of Apply before Launch, and of any request
// after Close.
var ErrHubNotRunning = errors.New("hub not running")

// Apply makes cfgs the running hub's upstreams after an edit: a new name
// starts, a gone one stops, a changed one (SameUpstream) restarts, and the
// others keep their connections (a failed one retries at once). A name
// configured twice, or a new tool name collision (a *CollisionError each),
// refuses the whole change. The catalog is rebuilt once the stopped ones
// have ended; started upstreams join as they connect, and a call of one
// waits as at start.
func (h *Hub) Apply(ctx context.Context, cfgs []UpstreamConfig) (Change, error) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	if err := uniqueNames(cfgs); err != nil {
		return Change{}, err
	}
	old := h.set()
	next, change, stopped := h.plan(old, cfgs)
	for _, u := range old.list {
		u.Retry() // one kept and failed tries again at once
	}
	if change.Empty() {
		return change, nil
	}
	if err := h.newCollisions(next); err != nil {
		return Change{}, err
	}
	h.mu.Lock()
	if h.closed || h.cancel == nil {
		h.mu.Unlock()
		return Change{}, ErrHubNotRunning
	}
	// Swapped before the old ones stop: a call of a restarted upstream's
	// tool waits for the new one rather than fail on the old.
	h.ups.Store(next)
	runs := make([]*run, 0, len(stopped))
	for _, u := range stopped {
		if r := h.runs[u]; r != nil {
			runs = append(runs, r)
			delete(h.runs, u)
		}
	}
	h.mu.Unlock()
	h.stopRuns(ctx, runs)
	h.mu.Lock()
	if !h.closed {
		for _, u := range next.list {
			if !old.has(u) {
				h.runLocked(ctx, u)
			}
		}
	}
	h.mu.Unlock()
	h.rebuild()
	return change, nil
}

// stopRuns cancels runs and waits until each has ended or ctx ends.
func (h *Hub) stopRuns(ctx context.Context, runs []*run) {
	for _, r := range runs {
		r.cancel()
	}
	for _, r := range runs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return
		}
	}
}

// plan is the set cfgs make of old, the change, and the upstreams of old
// that stop.
func (h *Hub) plan(old *upstreamSet, cfgs []UpstreamConfig) (*upstreamSet, Change, []*upstream.Upstream) {
	var change Change
	var stopped []*upstream.Upstream
	env := h.upstreamEnv()
	next := &upstreamSet{byName: make(map[string]*upstream.Upstream, len(cfgs))}
	for _, cfg := range cfgs {
		u, ok := old.byName[cfg.Name]
		switch {
		case !ok:
			change.Added = append(change.Added, cfg.Name)
			u = upstream.New(cfg, env)
		case !SameUpstream(u.Config(), cfg):
			change.Restarted = append(change.Restarted, cfg.Name)
			stopped = append(stopped, u)
			was := u
			u = upstream.New(cfg, env)
			if sameServer(was.Config(), cfg) {
				u.Seed(was.Listing())
			}
		}
		next.add(u)
	}
	for _, u := range old.list {
		if _, ok := next.byName[u.Name()]; !ok {
			change.Removed = append(change.Removed, u.Name())
			stopped = append(stopped, u)
		}
	}
	slices.Sort(change.Added)
	slices.Sort(change.Restarted)
	return next.sorted(), change, stopped
}

// newCollisions returns the collisions the known listings of next would
// bring that the catalog does not have: such an edit is refused whole. An
// added upstream lists nothing yet; its collisions are logged as it joins.
func (h *Hub) newCollisions(next *upstreamSet) error {
	cur := h.Catalog()
	had := map[string]bool{}
	for _, p := range cur.Problems {
		had[p.Text] = true
	}
	offers := make([]offer, 0, len(next.list))
	for _, u := range next.list {
		offers = append(offers, offer{cfg: u.Config(), Listing: u.Listing()})
	}
	var errs []error
	for _, p := range buildCatalog(cur, offers, h.opts.Reserved).Problems {
		if p.Collision && !had[p.Text] {
			errs = append(errs, &CollisionError{Text: p.Text, Upstreams: p.Upstreams})
		}
	}
	return errors.Join(errs...)
}

// SameUpstream reports whether a running with a need not restart for b:
// every field counts but the Authorizer, derived anew on each load.
func SameUpstream(a, b UpstreamConfig) bool {
	a.Authorizer, b.Authorizer = nil, nil
	return reflect.DeepEqual(a, b)
}

// sameServer reports whether a and b reach the same server, so that what a
// listed is what b will list.
func sameServer(a, b UpstreamConfig) bool {
	return a.Transport == b.Transport && a.Command == b.Command && slices.Equal(a.Args, b.Args) &&
		a.URL == b.URL && a.Builtin == b.Builtin
}

func uniqueNames(cfgs []UpstreamConfig) error {
	seen := make(map[string]bool, len(cfgs))
	for _, c := range cfgs {
		if seen[c.Name] {
			return fmt.Errorf("upstream %s is configured twice", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// ErrRestartRequested is the error an upstream restarted by [Hub.Restart]
// was disconnected with.
var ErrRestartRequested = errors.New("restart requested")

// Restart gives the upstream's connection up, as a lost connection is: a
// stdio child is stopped, and the upstream reconnects after the shortest
// backoff. An upstream not connected is left be; an unknown name is an
// error.
func (h *Hub) Restart(name string) error {
	u, ok := h.set().byName[name]
	if !ok {
		return fmt.Errorf("restarting %s: no such upstream", name)
	}
	u.GiveUp(ErrRestartRequested)
	return nil
}

// StateDisabled is the state of an upstream left out for its configuration
// (a variable not set, a URL that does not parse): the others serve, and
// status, doctor, the console and discovery say it is off and why.
const StateDisabled State = "disabled"

// DisabledUpstream is an upstream whose configuration entry could not be
// used.
type DisabledUpstream struct {
	Name        string
	Description string
	Domain      string
	// Prefix is what its tools' names would begin with, so that a call of
	// one says the upstream is disabled.
	Prefix string
	// Err says what is wrong, for people: the file and line, the key.
	Err error
	// Reason is what the model may read: no path, URL or value.
	Reason string
}

// disabledSet is the hub's disabled upstreams, and since when.
type disabledSet struct {
	list  []DisabledUpstream
	since time.Time
}

func (h *Hub) disabledNow() *disabledSet { return h.disabled.Load() }

// SetDisabled replaces the disabled upstreams after an edit; those already
// disabled keep their time.
func (h *Hub) SetDisabled(ds []DisabledUpstream) {
	old := h.disabledNow()
	since := time.Now()
	if len(old.list) > 0 {
		since = old.since
	}
	h.disabled.Store(&disabledSet{list: slices.Clone(ds), since: since})
}

func (d DisabledUpstream) status(since time.Time) Status {
	s := Status{Name: d.Name, State: StateDisabled, Cause: d.Err, Since: since, DownSince: since}
	if d.Err != nil {
		s.Err = d.Err.Error()
	}
	return s
}

// domain is the upstream's domain, as EffectiveDomain says it.
func (d DisabledUpstream) domain() string { return cmp.Or(d.Domain, d.Name) }

// ErrDisabled is the cause of a call of a tool of a disabled upstream.
var ErrDisabled = errors.New("disabled at start for its configuration")

// disabledOwner is the error of a call of name when it would be a tool of
// a disabled upstream (the longest prefix that fits); nil otherwise.
func (h *Hub) disabledOwner(name string) *UpstreamError {
	var best *DisabledUpstream
	dis := h.disabledNow().list
	for i, d := range dis {
		if d.Prefix != "" && strings.HasPrefix(name, d.Prefix) && (best == nil || len(d.Prefix) > len(best.Prefix)) {
			best = &dis[i]
		}
	}
	if best == nil {
		return nil
	}
	return &UpstreamError{Kind: call.KindUnavailable, Upstream: best.Name, Tool: name,
		Err: fmt.Errorf("%w: %w (%s)", upstream.ErrNotConnected, ErrDisabled, best.Reason)}
}
