package proxy

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/routing"
)

// QueryMetaKey is the tools/list _meta key under which a programmatic
// client may pass its user's message, to get the routed belt in one step.
const QueryMetaKey = "mcp-router/query"

// belts keeps one routing.Session per client session and decides what
// each client's tools/list shows: the proxy's own tools, the core tools
// and the session's routed tools. Every catalog tool stays registered, so
// a client that kept an old list can still call an evicted tool.
type belts struct {
	router *routing.Router
	opts   routing.SessionOptions
	core   []string

	mu       sync.Mutex
	sessions map[string]*routing.Session
}

func newBelts(r *routing.Router, opts routing.SessionOptions, core []string) *belts {
	return &belts{router: r, opts: opts, core: core, sessions: map[string]*routing.Session{}}
}

// session returns ctx's routing session, starting it on first use. A
// request of the stateless protocol has no session id: it gets a fresh
// session of its own, never one that every such request shares.
func (b *belts) session(ctx context.Context) *routing.Session {
	if stateless(ctx) {
		return b.router.NewSession(b.opts)
	}
	id := sessionID(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[id]
	if !ok {
		s = b.router.NewSession(b.opts)
		b.sessions[id] = s
	}
	return s
}

func (b *belts) forget(id string) {
	b.mu.Lock()
	delete(b.sessions, id)
	b.mu.Unlock()
}

// each calls fn for every live session.
func (b *belts) each(fn func(id string, s *routing.Session)) {
	b.mu.Lock()
	all := make(map[string]*routing.Session, len(b.sessions))
	for id, s := range b.sessions {
		all[id] = s
	}
	b.mu.Unlock()
	for id, s := range all {
		fn(id, s)
	}
}

// filter is the server's tool filter. At list time (the whole registry
// passed in) it keeps the session's belt. At call time mcp-go passes only
// the called tool: every registered tool stays callable, so a client whose
// list is stale still reaches what it was shown before.
func (b *belts) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if len(tools) <= 1 {
		return tools
	}
	s := b.session(ctx)
	onBelt := map[string]bool{}
	for _, name := range b.core {
		onBelt[name] = true
	}
	for _, name := range s.Belt() {
		onBelt[name] = true
	}
	breakerOpen := s.BreakerOpen()
	return slices.DeleteFunc(slices.Clone(tools), func(t mcp.Tool) bool {
		switch {
		case t.Name == requestMoreToolsName:
			return breakerOpen
		case isOwnTool(t.Name):
			return false
		default:
			return !onBelt[t.Name]
		}
	})
}

// fixed keeps the proxy's own tools and the core tools: the list of a
// client on the stateless protocol, a function of the profile alone (the
// tools request_more_tools finds it calls through call_tool).
func (b *belts) fixed(tools []mcp.Tool) []mcp.Tool {
	return slices.DeleteFunc(slices.Clone(tools), func(t mcp.Tool) bool {
		return !isOwnTool(t.Name) && !slices.Contains(b.core, t.Name)
	})
}

// queryFromMeta reads the user's message a client passed with tools/list.
func queryFromMeta(meta *mcp.Meta) string {
	if meta == nil {
		return ""
	}
	q, _ := meta.AdditionalFields[QueryMetaKey].(string)
	return strings.TrimSpace(q)
}

// sizes is the number of sessions and of routed tools on all their belts.
func (b *belts) sizes() (sessions, tools int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.sessions {
		tools += len(s.Belt())
	}
	return len(b.sessions), tools
}
