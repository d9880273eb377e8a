package proxy

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/call"
)

// listQuiet is how long a stdio session holds a list_changed before it
// sends it, so that the changes of upstreams joining close together reach
// the client as one notification.
const listQuiet = 100 * time.Millisecond

// listKinds are the list_changed notifications a session gates.
var listKinds = []mcp.MCPMethod{
	mcp.MethodNotificationToolsListChanged,
	mcp.MethodNotificationPromptsListChanged,
	mcp.MethodNotificationResourcesListChanged,
}

// listGate remembers, per list, the fingerprint of what one session last
// saw, so that a list_changed reaches the client only when its list
// differs (upstreams joining behind a belt change nothing it sees). It is
// safe for concurrent use.
type listGate struct {
	// fingerprint is what the session would list now for a list_changed.
	fingerprint func(method string) uint64

	// held is set, for an HTTP session, when a request changed the
	// session's tools: mcp-go may drop a notification sent as the request
	// ends, so gateHTTP sends it once the request has ended.
	held atomic.Bool

	mu   sync.Mutex
	seen map[string]uint64 // by notification method
}

func newListGate(fingerprint func(method string) uint64) *listGate {
	return &listGate{fingerprint: fingerprint, seen: map[string]uint64{}}
}

// saw records what the session holds now for method's list.
func (g *listGate) saw(method string) { g.sawAs(method, g.fingerprint(method)) }

// sawAs records fp as what the session holds of method's list.
func (g *listGate) sawAs(method string, fp uint64) {
	g.mu.Lock()
	g.seen[method] = fp
	g.mu.Unlock()
}

// news reports whether the session's list for method differs from what it
// last saw, and records it as seen.
func (g *listGate) news(method string) bool {
	fp := g.fingerprint(method)
	g.mu.Lock()
	defer g.mu.Unlock()
	old, ok := g.seen[method]
	g.seen[method] = fp
	return !ok || old != fp
}

// syncedLists are the fingerprints of the lists a server last set.
type syncedLists struct {
	set [3]bool
	fp  [3]uint64
}

const (
	listTools = iota
	listPrompts
	listResources
)

// changed reports whether fp is new for the list, and records it.
func (l *syncedLists) changed(list int, fp uint64) bool {
	if l.set[list] && l.fp[list] == fp {
		return false
	}
	l.set[list], l.fp[list] = true, fp
	return true
}

func toolsFingerprint(tools []server.ServerTool) uint64 {
	var h maphash.Hash
	h.SetSeed(listSeed)
	for _, t := range tools {
		b, _ := json.Marshal(t.Tool)
		h.Write(b)
	}
	return h.Sum64()
}

// shownFingerprint is the fingerprint of tools as sync shows them: the
// proxy's own (the first own), then c's with their hints. A catalog
// tool's definition counts by the sum signature took of it (defSums),
// not by encoding it again: a start rebuilds a catalog of thousands of
// tools several times.
func shownFingerprint(tools []server.ServerTool, own int, c *Catalog) uint64 {
	if len(c.defSums) != len(c.Tools) || len(tools) != own+len(c.Tools) {
		return toolsFingerprint(tools)
	}
	var h maphash.Hash
	h.SetSeed(listSeed)
	for _, t := range tools[:own] {
		b, _ := json.Marshal(t.Tool)
		h.Write(b)
	}
	var sum [8]byte
	for i, t := range tools[own:] {
		h.Write(binary.LittleEndian.AppendUint64(sum[:0], c.defSums[i]))
		var fields map[string]any
		if t.Tool.Meta != nil {
			fields = t.Tool.Meta.AdditionalFields
		}
		hint, _ := fields[SearchHintMetaKey].(string)
		always, _ := fields[AlwaysLoadMetaKey].(bool)
		h.WriteString(hint)
		h.WriteByte(0)
		if always {
			h.WriteByte(1)
		} else {
			h.WriteByte(0)
		}
	}
	return h.Sum64()
}

// isListChanged reports whether method is a list_changed the gate judges.
func isListChanged(method string) bool {
	return slices.Contains(listKinds, mcp.MCPMethod(method))
}

var listSeed = maphash.MakeSeed()

// listFingerprint is the fingerprint of what ctx's session would list for
// the list_changed method.
func (s *Server) listFingerprint(ctx context.Context, method string) uint64 {
	if mcp.MCPMethod(method) != mcp.MethodNotificationToolsListChanged {
		return catalogFingerprint(s.hub.Catalog(), method)
	}
	registered := s.mcp.ListTools()
	tools := make([]mcp.Tool, 0, len(registered))
	for _, name := range slices.Sorted(maps.Keys(registered)) {
		tools = append(tools, registered[name].Tool)
	}
	return visibleFingerprint(s.filterTools(ctx, tools))
}

// visibleFingerprint is the fingerprint of a tool list, in name order.
func visibleFingerprint(tools []mcp.Tool) uint64 {
	byName := func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(tools, byName) {
		tools = slices.SortedFunc(slices.Values(tools), byName)
	}
	var h maphash.Hash
	h.SetSeed(listSeed)
	for _, t := range tools {
		b, _ := json.Marshal(t)
		h.Write(b)
	}
	return h.Sum64()
}

// catalogFingerprint is the fingerprint of c's prompts, or of its
// resources and templates with their upstreams, for their list_changed.
func catalogFingerprint(c *Catalog, method string) uint64 {
	var h maphash.Hash
	h.SetSeed(listSeed)
	switch mcp.MCPMethod(method) {
	case mcp.MethodNotificationPromptsListChanged:
		for _, p := range c.Prompts {
			b, _ := json.Marshal(p.Def)
			h.Write(b)
		}
	case mcp.MethodNotificationResourcesListChanged:
		for _, r := range c.Resources {
			b, _ := json.Marshal(r.Def)
			fmt.Fprintf(&h, "r\x00%s\x00%s\x00", r.Upstream, b)
		}
		for _, t := range c.Templates {
			b, _ := json.Marshal(t.Def)
			fmt.Fprintf(&h, "t\x00%s\x00%s\x00", t.Upstream, b)
		}
	}
	return h.Sum64()
}

// seeLists records what ctx's session holds after initialize or a list
// request. A stateless request records nothing: there every list_changed
// passes, telling a listening client that the catalog changed.
func (s *Server) seeLists(ctx context.Context, methods ...mcp.MCPMethod) {
	if server.IsModernRequest(ctx) {
		return
	}
	g := s.gateOf(ctx)
	if g == nil {
		return
	}
	for _, m := range methods {
		g.saw(string(m))
	}
}

// gateOf returns the list gate of ctx's session: a stdio session's own, or
// an HTTP session's, made at its first sight from that request's context.
func (s *Server) gateOf(ctx context.Context) *listGate {
	switch sess := server.ClientSessionFromContext(ctx).(type) {
	case nil:
		return nil
	case *stdioSession:
		return sess.lists
	default:
		if g, ok := s.httpGates.Load(sess.SessionID()); ok {
			return g.(*listGate)
		}
		base := context.WithoutCancel(ctx)
		g, _ := s.httpGates.LoadOrStore(sess.SessionID(), newListGate(func(method string) uint64 { return s.listFingerprint(base, method) }))
		return g.(*listGate)
	}
}

// gateHTTP drops from a session's HTTP responses the list_changed events
// that would tell the client nothing new (mcp-go sends one to every
// session whenever the catalog changes).
type gateHTTP struct {
	next http.Handler
	s    *Server
}

func (h gateHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(server.HeaderKeySessionID)
	g, ok := h.s.httpGates.Load(id)
	if !ok {
		h.next.ServeHTTP(w, r)
		return
	}
	gate := g.(*listGate)
	h.next.ServeHTTP(gatedWriter{ResponseWriter: w, gate: gate}, r)
	if gate.held.Swap(false) { // the session's event stream, or its next request, carries it
		// The request's forwarder, still running a moment after it
		// ends, could take it too, and drop it.
		wait := time.NewTimer(heldDelay)
		select {
		case <-wait.C:
		case <-r.Context().Done():
		}
		wait.Stop()
		if err := h.s.mcp.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationToolsListChanged), nil); err != nil {
			h.s.logger.Debug("tools list_changed not sent", "session_id", call.SessionTag(id), "err", err)
		}
	}
}

// holdToolsChanged holds an HTTP session's tools/list_changed until its
// request ends (listGate.held); false for a session that is not HTTP.
func (s *Server) holdToolsChanged(ctx context.Context) bool {
	g, ok := s.httpGates.Load(call.SessionOf(ctx))
	if !ok {
		return false
	}
	g.(*listGate).held.Store(true)
	return true
}

// gatedWriter drops the SSE events of list_changed notifications its gate
// finds stale; mcp-go writes each event in one Write.
type gatedWriter struct {
	http.ResponseWriter
	gate *listGate
}

func (w gatedWriter) Write(p []byte) (int, error) {
	if m := listChangedEvent(p); m != "" && !w.gate.news(m) {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w gatedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w gatedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// heldDelay is how long after a request ends gateHTTP sends the list_changed
// it held, for mcp-go's forwarder of the request to have seen it end.
// Measured with TestBeltChangeHeardOverHTTPEveryTime under load: sent at
// once, 3 of 120 sessions lost one; after 20 ms, none of 700.
var heldDelay = 20 * time.Millisecond

// maxListEvent bounds the SSE event of a list_changed notification.
const maxListEvent = 512

// listChangedEvent returns the method of the list_changed notification p
// is the whole SSE event of, or "".
func listChangedEvent(p []byte) string {
	const prefix = "event: message\ndata: "
	if len(p) > maxListEvent || !bytes.HasPrefix(p, []byte(prefix)) {
		return ""
	}
	var n struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(bytes.TrimSpace(p[len(prefix):]), &n) != nil || n.ID != nil || !isListChanged(n.Method) {
		return ""
	}
	return n.Method
}

// hookListGate records what a session was shown: every list at initialize,
// and each list when the client reads it.
func (s *Server) hookListGate(hooks *server.Hooks) {
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		s.seeLists(ctx, listKinds...)
	})
	hooks.AddAfterListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		// The result itself is what the session was shown.
		if g := s.gateOf(ctx); g != nil && !server.IsModernRequest(ctx) && res != nil && res.NextCursor == "" {
			g.sawAs(string(mcp.MethodNotificationToolsListChanged), visibleFingerprint(res.Tools))
		}
	})
	hooks.AddAfterListPrompts(func(ctx context.Context, _ any, _ *mcp.ListPromptsRequest, _ *mcp.ListPromptsResult) {
		s.seeLists(ctx, mcp.MethodNotificationPromptsListChanged)
	})
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, _ *mcp.ListResourcesResult) {
		s.seeLists(ctx, mcp.MethodNotificationResourcesListChanged)
	})
}
