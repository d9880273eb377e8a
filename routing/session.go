package routing

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/mcp-router/mcp-router/internal/defaults"
	"github.com/mcp-router/mcp-router/routing/fuse"
)

// ErrBreakerOpen is Session.Discover's error while the breaker is open.
var ErrBreakerOpen = errors.New("discovery circuit breaker open")

// SessionOptions configures a Session. Zero values take the defaults in brackets.
type SessionOptions struct {
	MaxTools int // caps the routed tools on the belt [DefaultMaxTools]
	// MaxDiscoveries and ResetAfter configure the discovery breaker [3, 2m].
	MaxDiscoveries int
	ResetAfter     time.Duration
	ContextSize    int // how many recent domains make up the domain context [3]
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Session is one client's routing state: its belt of routed tools, its
// domain context and its discovery breaker. It is safe for concurrent use.
type Session struct {
	router  *Router
	opts    SessionOptions
	breaker *fuse.Breaker

	mu      sync.Mutex
	belt    []string // routed tools, least recently used first
	domains []string // recent domains, most recent first
	detour  detour   // discoveries since the last successful call
	calls   []bool   // outcomes of the last successWindow calls, oldest first
}

// successWindow is how many recent calls SuccessRate reads.
const successWindow = 20

// SuccessRate returns the share of the last 20 calls that succeeded, or
// -1 before any.
func (s *Session) SuccessRate() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		return -1
	}
	n := 0
	for _, ok := range s.calls {
		if ok {
			n++
		}
	}
	return float64(n) / float64(len(s.calls))
}

// detour is what the session searched since its last successful call.
type detour struct {
	queries   []string
	collision bool
	given     []string // the tools it was handed
}

// NewSession starts a session with an empty belt and no domain context.
func (r *Router) NewSession(opts SessionOptions) *Session {
	defaults.Set(&opts.MaxTools, DefaultMaxTools)
	defaults.Set(&opts.ContextSize, DefaultContextSize)
	return &Session{
		router: r,
		opts:   opts,
		breaker: fuse.NewBreaker(fuse.BreakerOptions{
			MaxDiscoveries: opts.MaxDiscoveries, ResetAfter: opts.ResetAfter, Now: opts.Now,
		}),
	}
}

// Discovery is the outcome of one request_more_tools.
type Discovery struct {
	Decision
	// Added and Evicted are the belt's changes.
	Added, Evicted []string
	Breaker        fuse.BreakerState // the breaker's state after this discovery
}

// Changed reports whether the belt changed.
func (d Discovery) Changed() bool { return len(d.Added)+len(d.Evicted) > 0 }

// Discover routes req with the session's domain context and puts the
// selection on the belt; ErrBreakerOpen changes nothing.
func (s *Session) Discover(ctx context.Context, req Request) (Discovery, error) {
	allowed, _ := s.breaker.Discover()
	if !allowed {
		return Discovery{Breaker: s.breaker.State()}, ErrBreakerOpen
	}
	req.Domains = s.Domains()
	d := Discovery{Decision: s.router.Route(ctx, req)}
	d.Added, d.Evicted = s.put(d.Selected)
	s.noteDetour(req, d.Decision)
	s.noteDomains(d.Selected)
	d.Breaker = s.breaker.State()
	return d, nil
}

// Preview routes req with the session's context, belt and breaker untouched.
func (s *Session) Preview(ctx context.Context, req Request) Decision {
	req.Domains = s.Domains()
	return s.router.Route(ctx, req)
}

// Load puts tools on the belt as a discovery would, breaker untouched.
func (s *Session) Load(selected []Candidate) (added, evicted []string) {
	added, evicted = s.put(selected)
	s.noteDomains(selected)
	return added, evicted
}

// put adds the selection to the belt and evicts the least recently used
// past the cap (never what this call added).
func (s *Session) put(selected []Candidate) (added, evicted []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range selected {
		if i := slices.Index(s.belt, c.Name); i >= 0 {
			s.belt = slices.Delete(s.belt, i, i+1)
		} else {
			added = append(added, c.Name)
		}
		s.belt = append(s.belt, c.Name)
	}
	for len(s.belt) > s.opts.MaxTools && len(s.belt) > len(selected) {
		evicted = append(evicted, s.belt[0])
		s.belt = s.belt[1:]
	}
	return added, evicted
}

// CallEffect is what a call changed for the session.
type CallEffect struct {
	Reopened bool // the breaker was open and the call closed it
	// Detour, when set, is the first query of a search that took two
	// discoveries or a collision alert before this tool, which one of them
	// found or was asked for (noteDetour), succeeded: a lesson to learn.
	Detour string
}

// Called records a call of a catalog tool: its domain joins the context,
// it counts as used, and a success closes the breaker and ends the detour.
func (s *Session) Called(name string, ok bool) CallEffect {
	t, known := s.router.Tool(name)
	if !known {
		return CallEffect{}
	}
	var eff CallEffect
	s.mu.Lock()
	if i := slices.Index(s.belt, name); i >= 0 {
		s.belt = append(slices.Delete(s.belt, i, i+1), name)
	}
	s.pushDomain(domainOf(t))
	s.calls = append(s.calls, ok)
	if len(s.calls) > successWindow {
		s.calls = s.calls[len(s.calls)-successWindow:]
	}
	if ok {
		d := s.detour
		if (len(d.queries) >= 2 || d.collision) && slices.Contains(d.given, name) {
			eff.Detour = d.queries[0]
		}
		s.detour = detour{}
	}
	s.mu.Unlock()
	if !ok {
		return eff
	}
	eff.Reopened = s.breaker.Open()
	s.breaker.Success()
	return eff
}

// noteDetour adds a discovery to the detour; a query sharing no word with
// its first one starts a new detour. Of the tools handed over, only those
// the ranking found (at the noise floor) or the model asked for can serve
// the request: the others came along for coverage or as discovery tools.
func (s *Session) noteDetour(req Request, d Decision) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if query := req.Query; query != "" {
		if len(s.detour.queries) > 0 && !related(s.detour.queries[0], query) {
			s.detour = detour{}
		}
		s.detour.queries = append(s.detour.queries, query)
	}
	for _, c := range d.Selected {
		served := c.Score >= s.router.opts.Fuse.MinQRScore || slices.Contains(req.Needs, c.Name)
		if served && !slices.Contains(s.detour.given, c.Name) {
			s.detour.given = append(s.detour.given, c.Name)
		}
	}
	s.detour.collision = s.detour.collision || slices.ContainsFunc(d.Alerts, func(a Alert) bool { return a.Kind == "collision" })
}

func (s *Session) noteDomains(selected []Candidate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(selected) - 1; i >= 0; i-- { // best ends most recent
		s.pushDomain(selected[i].Domain)
	}
}

func (s *Session) pushDomain(d string) {
	if d == "" {
		return
	}
	if i := slices.Index(s.domains, d); i >= 0 {
		s.domains = slices.Delete(s.domains, i, i+1)
	}
	s.domains = slices.Insert(s.domains, 0, d)
	if len(s.domains) > s.opts.ContextSize {
		s.domains = s.domains[:s.opts.ContextSize]
	}
}

// Domains is the session's domain context, most recent first.
func (s *Session) Domains() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.domains)
}

// Belt returns the routed tools on the belt, least recently used first.
func (s *Session) Belt() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.belt)
}

// Retain drops the belt tools keep rejects, and reports whether any went.
func (s *Session) Retain(keep func(string) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.belt)
	s.belt = slices.DeleteFunc(s.belt, func(name string) bool { return !keep(name) })
	return len(s.belt) != n
}

// BreakerOpen reports whether discovery is off for now.
func (s *Session) BreakerOpen() bool { return s.breaker.Open() }

// related tells that two requests share a term (see words).
func related(a, b string) bool {
	ta := words.Tokens(a)
	return slices.ContainsFunc(words.Tokens(b), func(w string) bool { return slices.Contains(ta, w) })
}
