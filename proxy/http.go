package proxy

// The HTTP side of the server: the in-flight id check, the answer to
// requests cancelled before anything was written, and the health probes.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// inflightIDs refuses a tools/call whose id a call in progress in the same
// session uses (BI-04): two answers with one id cannot be told apart.
type inflightIDs struct {
	mu  sync.Mutex
	ids map[callKey]bool
}

// callKey names a call of an HTTP session: the session id and the request
// id as idText prints it. The two stay apart rather than joined in one
// string, which a sealed session id of some hundred bytes made an
// allocation at each of the four look-ups a call takes.
type callKey struct{ session, id string }

func inflightKey(ctx context.Context, id any) callKey {
	return callKey{call.SessionOf(ctx), idText(id)}
}

// idText is a request id as fmt prints it, faster for the kinds
// encoding/json decodes an id to.
func idText(id any) string {
	switch id := id.(type) {
	case string:
		return id
	case float64:
		return strconv.FormatFloat(id, 'g', -1, 64) // as %v prints it
	}
	return fmt.Sprint(id)
}

// hook refuses a reused id, and hands the key of a call it admits to
// admitted (nil: none). A stdio connection admits its calls itself.
func (f *inflightIDs) hook(hooks *server.Hooks, admitted func(ctx context.Context, key callKey)) {
	hooks.AddOnRequestInitialization(func(ctx context.Context, id any, message any) error {
		if stdioRequest(ctx) || perRequestSession(ctx) || !isToolCall(ctx, message) {
			return nil
		}
		key := inflightKey(ctx, id)
		if err := f.admit(key, id); err != nil {
			return err
		}
		if admitted != nil {
			admitted(ctx, key)
		}
		return nil
	})
	done := func(ctx context.Context, id any) {
		if stdioRequest(ctx) {
			return
		}
		f.mu.Lock()
		delete(f.ids, inflightKey(ctx, id))
		f.mu.Unlock()
	}
	hooks.AddAfterCallTool(func(ctx context.Context, id any, _ *mcp.CallToolRequest, _ any) { done(ctx, id) })
	hooks.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodToolsCall {
			done(ctx, id)
		}
	})
}

// admit takes key for a call, or refuses it when a call in progress has it.
func (f *inflightIDs) admit(key callKey, id any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids[key] {
		return fmt.Errorf("request id %v is already used by a call in progress", id)
	}
	if f.ids == nil {
		f.ids = map[callKey]bool{}
	}
	f.ids[key] = true
	return nil
}

// perRequestSession reports whether ctx's session lives for one request
// only: a streamable HTTP request on the stateless protocol.
func perRequestSession(ctx context.Context) bool {
	return isHTTPSession(ctx) && call.SessionOf(ctx) == ""
}

// isToolCall reports whether message is a tools/call: as the pre-check
// read it, when it did, else scanned here.
func isToolCall(ctx context.Context, message any) bool {
	raw, ok := message.(json.RawMessage)
	if is, known := wire.PrecheckedIs(ctx, raw, string(mcp.MethodToolsCall)); ok && known {
		return is
	}
	// A cheap test first, as this runs per request; a message with an
	// escape may spell the method "tools\/call".
	if !ok || !bytes.Contains(raw, []byte(mcp.MethodToolsCall)) && !bytes.ContainsRune(raw, '\\') {
		return false
	}
	// Then the scanner's one pass, when it reads the method plainly.
	if head, err := wire.ReadHead(raw); err == nil && head.Top == '{' && bytes.IndexByte(head.Method, '\\') < 0 {
		return string(head.Method) == `"`+string(mcp.MethodToolsCall)+`"`
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(raw, &m) == nil && m.Method == string(mcp.MethodToolsCall)
}

// answerCancelled answers 503 (with Retry-After) a request whose context
// ended before the MCP server wrote anything (at shutdown): mcp-go would
// leave an empty 200 that a client cannot read, and a 503 tells it, or a
// load balancer, to try again elsewhere.
type answerCancelled struct{ next http.Handler }

func (h answerCancelled) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ww := &wroteWatcher{ResponseWriter: w}
	h.next.ServeHTTP(ww, r)
	if !ww.wrote.Load() && r.Context().Err() != nil {
		w.Header().Set("Retry-After", "1")
		frontdoor.WriteRefusal(w, http.StatusServiceUnavailable, "the gateway is shutting down: retry the request")
	}
}

// wroteWatcher notes whether a response was started.
type wroteWatcher struct {
	http.ResponseWriter
	wrote atomic.Bool
}

func (w *wroteWatcher) WriteHeader(status int) {
	w.wrote.Store(true)
	w.ResponseWriter.WriteHeader(status)
}

func (w *wroteWatcher) Write(b []byte) (int, error) {
	w.wrote.Store(true)
	return w.ResponseWriter.Write(b)
}

// Flush keeps event streams streaming.
func (w *wroteWatcher) Flush() {
	w.wrote.Store(true)
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *wroteWatcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Probe is what a health endpoint answers.
type Probe int

const (
	// Alive answers 200 while the gateway serves (/healthz).
	Alive Probe = iota
	// Ready answers 200 when every upstream is connected, else 503 (/readyz).
	Ready
)

// HealthHandler answers one probe behind Guard's Host and Origin checks,
// GET and HEAD only. With bearer tokens configured, only a caller with a
// valid gateway-wide token also gets each upstream's name and state.
func HealthHandler(hub *Hub, p Probe, opts frontdoor.Options) http.Handler {
	return &health{hub: hub, probe: p, door: frontdoor.NewChecks(opts)}
}

type health struct {
	hub   *Hub
	probe Probe
	door  *frontdoor.Checks
}

// healthReport is a probe's JSON body.
type healthReport struct {
	Status    string           `json:"status"` // alive, ready or not_ready
	Upstreams healthCounts     `json:"upstreams"`
	States    []upstreamHealth `json:"states,omitempty"` // with a valid token only
}

type healthCounts struct {
	Total     int `json:"total"`
	Connected int `json:"connected"`
	Starting  int `json:"starting"`
}

type upstreamHealth struct {
	Name   string `json:"name"`
	State  State  `json:"state"`
	Tools  int    `json:"tools"`
	Reason string `json:"reason,omitempty"` // why it is not connected
}

func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.door.CheckSite(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The upstreams' states are for those who may see the whole gateway.
	caller, ok := h.door.RequestCaller(r)
	full := ok && caller.Wide
	rep, code := h.report(full)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if r.Method == http.MethodGet {
		_ = json.NewEncoder(w).Encode(rep)
	}
}

// report is the probe's answer; full adds the upstreams' names and states.
func (h *health) report(full bool) (healthReport, int) {
	statuses := h.hub.Status()
	rep := healthReport{Status: "alive", Upstreams: healthCounts{Total: len(statuses)}}
	for _, s := range statuses {
		uh := upstreamHealth{Name: s.Name, State: s.State, Tools: s.Tools}
		switch {
		case s.State == StateConnected:
			rep.Upstreams.Connected++
		case s.Err != "":
			uh.Reason = s.Err
		default:
			uh.Reason = s.Doing
		}
		if s.Starting {
			rep.Upstreams.Starting++
		}
		if full {
			rep.States = append(rep.States, uh)
		}
	}
	code := http.StatusOK
	if h.probe == Ready {
		rep.Status = "ready"
		if rep.Upstreams.Connected < rep.Upstreams.Total {
			rep.Status, code = "not_ready", http.StatusServiceUnavailable
		}
	}
	return rep, code
}
