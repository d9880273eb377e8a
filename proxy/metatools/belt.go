package metatools

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// QueryMetaKey is the tools/list _meta key under which a client may pass
// its user's message, to get the routed belt in one step.
const QueryMetaKey = "mcp-router/query"

// belts keeps one routing.Session per client session. Every catalog tool
// stays registered, so a client with an old list can still call an
// evicted tool.
type belts struct {
	router *routing.Router
	opts   routing.SessionOptions
	core   []string

	mu       sync.Mutex
	sessions map[string]*routing.Session
}

// session returns c's routing session, starting it on first use; a
// stateless request gets a fresh one of its own.
func (b *belts) session(c *call.Call) *routing.Session {
	if c.Era == call.Stateless {
		return b.router.NewSession(b.opts)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[c.Session]
	if !ok {
		s = b.router.NewSession(b.opts)
		b.sessions[c.Session] = s
	}
	return s
}

// Session is c's routing session (see Routes: nil without a router).
func (t *Tools) Session(c *call.Call) *routing.Session {
	if t.belts == nil {
		return nil
	}
	return t.belts.session(c)
}

// Forget drops the routing state of a session that ended.
func (t *Tools) Forget(id string) {
	if t.belts != nil {
		t.belts.mu.Lock()
		delete(t.belts.sessions, id)
		t.belts.mu.Unlock()
	}
	t.outages.Delete(id)
	t.ReportBelts()
}

// Retain keeps on every belt only the tools keep accepts.
func (t *Tools) Retain(keep func(name string) bool) {
	if t.belts == nil {
		return
	}
	b := t.belts
	b.mu.Lock()
	all := make([]*routing.Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		all = append(all, s)
	}
	b.mu.Unlock()
	for _, s := range all {
		s.Retain(keep)
	}
}

// Filter is what c's tools/list shows: at list time c's belt, or on the
// stateless protocol the own and core tools (a function of the profile
// alone). At call time mcp-go passes only the called tool, which stays
// callable, so a client with a stale list still reaches it.
func (t *Tools) Filter(c *call.Call, tools []mcp.Tool) []mcp.Tool {
	b := t.belts
	if len(tools) <= 1 || b == nil {
		return tools
	}
	if c.Era == call.Stateless {
		return slices.DeleteFunc(slices.Clone(tools), func(t mcp.Tool) bool {
			return !IsOwn(t.Name) && !slices.Contains(b.core, t.Name)
		})
	}
	s := b.session(c)
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
		case t.Name == RequestMoreToolsName:
			return breakerOpen
		case IsOwn(t.Name):
			return false
		default:
			return !onBelt[t.Name]
		}
	})
}

// QueryFromMeta reads the user's message a client passed with tools/list.
func QueryFromMeta(meta *mcp.Meta) string {
	if meta == nil {
		return ""
	}
	q, _ := meta.AdditionalFields[QueryMetaKey].(string)
	return strings.TrimSpace(q)
}

// ReportBelts updates the belt gauges.
func (t *Tools) ReportBelts() {
	if t.belts == nil || t.opts.Metrics == nil {
		return
	}
	b := t.belts
	b.mu.Lock()
	tools := 0
	for _, s := range b.sessions {
		tools += len(s.Belt())
	}
	sessions := len(b.sessions)
	b.mu.Unlock()
	t.opts.Metrics.BeltSize(sessions, tools)
}

// NoteOutage remembers that c met an outage: the detour is not learned.
func (t *Tools) NoteOutage(c *call.Call) {
	if c.Carried != nil {
		c.Carried.Outage = true
	} else if c.Era != call.Stateless {
		t.outages.Store(c.Session, true)
	}
}

// tookOutage reports and forgets an outage noted for c's client.
func (t *Tools) tookOutage(c *call.Call) bool {
	if c.Carried != nil {
		was := c.Carried.Outage
		c.Carried.Outage = false
		return was
	}
	_, seen := t.outages.LoadAndDelete(c.Session)
	return seen
}

// Called tells c's routing state (its session's, or its handle's) about
// its call of c.Tool. A success after a detour teaches routing a lesson,
// unless an outage caused the detour.
func (t *Tools) Called(ctx context.Context, c *call.Call, ok bool) {
	name := c.Tool
	if t.belts == nil {
		return
	}
	var sess *routing.Session
	switch {
	case c.Carried != nil:
		sess = c.Carried.Session
	case c.Era == call.Stateless:
		return
	default:
		sess = t.belts.session(c)
	}
	eff := sess.Called(name, ok)
	if eff.Reopened && t.opts.Client != nil {
		t.opts.Client.ToolsChanged(ctx, c) // request_more_tools is back
	}
	if ok && t.tookOutage(c) && eff.Detour != "" {
		t.opts.Logger.Info("no routing lesson from a detour an outage caused", "tool", name)
		return
	}
	if eff.Detour != "" && t.opts.Lessons != nil { // learned off the response path
		t.opts.Lessons.Offer(ctx, lessons.Lesson{Query: eff.Detour, Tool: name, Polarity: lessons.Use, Source: lessons.SourceDetour,
			Principal: c.Who()})
	}
}
