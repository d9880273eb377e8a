package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/internal/printable"
	"github.com/mcp-router/mcp-router/proxy/apps"
)

// Relay is where what an upstream asks of, or tells, a client goes:
// sampling, elicitation and log messages to the client whose call caused
// them and no other; resource updates to the URI's subscribers.
type Relay interface {
	CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
	Log(ctx context.Context, n mcp.LoggingMessageNotification)
	// ResourceUpdated tells uri's subscribers it changed, if upstream
	// is the one that offers it.
	ResourceUpdated(upstream, uri string)
}

// ErrNoCaller answers an upstream's request to the client when no client
// call is in progress on that upstream.
var ErrNoCaller = errors.New("no client call in progress on this upstream to ask")

// ErrAmbiguousCaller answers an upstream's request to the client when
// calls of several clients are in progress and the request does not show
// whose it is: the gateway does not guess.
var ErrAmbiguousCaller = errors.New("calls of several clients are in progress on this upstream " +
	"and the request does not show which one it belongs to")

// callers tracks the client contexts of the calls in progress on one
// upstream.
type callers struct {
	mu   sync.Mutex
	next uint64
	ctxs map[uint64]context.Context
}

// callKey marks the context a call is sent upstream with by a callMark.
type callKey struct{}

// callMark is a call's number among the callers of its upstream.
type callMark struct {
	of *callers
	id uint64
}

// add records a call of the client of ctx, and returns the context to send
// it upstream with (marked) and the func that ends the record.
func (c *callers) add(ctx context.Context) (context.Context, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctxs == nil {
		c.ctxs = map[uint64]context.Context{}
	}
	c.next++
	id := c.next
	c.ctxs[id] = ctx
	return context.WithValue(ctx, callKey{}, callMark{c, id}), func() {
		c.mu.Lock()
		delete(c.ctxs, id)
		c.mu.Unlock()
	}
}

// owner is the context of the client call that an upstream's request or
// notification belongs to: the call hint is marked with (a streamable
// HTTP request on the call's response stream; nobody once that call is
// over), else the newest call when all in progress are one caller's.
func (c *callers) owner(hint context.Context) (context.Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hint != nil {
		if m, ok := hint.Value(callKey{}).(callMark); ok && m.of == c {
			if ctx, ok := c.ctxs[m.id]; ok {
				return ctx, nil
			}
			return nil, ErrNoCaller
		}
	}
	if len(c.ctxs) == 0 {
		return nil, ErrNoCaller
	}
	var newest uint64
	callers := map[caller]bool{}
	for id, ctx := range c.ctxs {
		callers[callerOf(ctx)] = true
		newest = max(newest, id)
	}
	if len(callers) > 1 {
		return nil, ErrAmbiguousCaller
	}
	return c.ctxs[newest], nil
}

// handlerOptions let an upstream ask the client for sampling and
// elicitation through the relay. Roots are not offered: the gateway will
// not pass on one client's.
func (u *Upstream) handlerOptions() []client.ClientOption {
	return []client.ClientOption{
		client.WithSamplingHandler(clientHandler{u}),
		client.WithElicitationHandler(clientHandler{u}),
	}
}

// clientHandler passes an upstream's sampling and elicitation requests on.
type clientHandler struct{ u *Upstream }

func (h clientHandler) CreateMessage(hint context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	ctx, r, err := h.u.caller(hint, "sampling/createMessage")
	if err != nil {
		return nil, err
	}
	// To the client the gateway is one server: "thisServer" or "allServers" context would hand the
	// asking upstream what every upstream behind the gateway returned.
	req.IncludeContext = ""
	req.SystemPrompt = h.u.scrub.Text(req.SystemPrompt) // a model reads it: no configured secret
	for i, m := range req.Messages {
		if t, ok := m.Content.(mcp.TextContent); ok {
			t.Text = h.u.scrub.Text(t.Text)
			req.Messages[i].Content = t
		}
	}
	return r.CreateMessage(ctx, req)
}

func (h clientHandler) Elicit(hint context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	ctx, r, err := h.u.caller(hint, "elicitation/create")
	if err != nil {
		return nil, err
	}
	// The person reads it as the gateway's: it says whose question it is, so an upstream cannot
	// pose as the gateway (its approval questions, or a request for a secret in its name); its
	// controls are escaped, so that none writes over that name or reorders it.
	req.Params.Message = h.u.cfg.Name + " asks: " + printable.Lines(h.u.scrub.Text(req.Params.Message))
	return r.Elicit(ctx, req)
}

// caller is the context of the client call that an upstream's request
// belongs to, or why there is none.
func (u *Upstream) caller(hint context.Context, method string) (context.Context, Relay, error) {
	r := u.env.Relay()
	if r == nil {
		return nil, nil, fmt.Errorf("%s: %w", method, ErrNoCaller)
	}
	ctx, err := u.calls.owner(hint)
	if err != nil {
		u.logger.Warn("upstream request refused", "method", method, "err", err)
		return nil, nil, fmt.Errorf("%s: %w", method, err)
	}
	return ctx, r, nil
}

// relayLog passes an upstream's log message to the client whose call is in
// progress on it; with several clients' calls, or none, to our log only.
func (u *Upstream) relayLog(n mcp.JSONRPCNotification) {
	var msg mcp.LoggingMessageNotification
	b, _ := json.Marshal(n)
	if json.Unmarshal(b, &msg) != nil {
		return
	}
	msg.Method = string(mcp.MethodNotificationMessage)
	msg.Params.Data = u.scrub.value(msg.Params.Data) // no configured secret reaches a client
	r := u.env.Relay()
	//lint:ignore SA1012 a nil hint is owner's way to say the message names no call
	ctx, err := u.calls.owner(nil)
	if r == nil || err != nil {
		u.logger.Debug("upstream log", "level", msg.Params.Level, "logger", msg.Params.Logger, "not_relayed", err)
		return
	}
	r.Log(ctx, msg)
}

func (u *Upstream) relayResourceUpdated(n mcp.JSONRPCNotification) {
	uri, _ := n.Params.AdditionalFields["uri"].(string)
	if r := u.env.Relay(); r != nil && uri != "" {
		r.ResourceUpdated(u.cfg.Name, apps.URI(u.cfg.Name, uri)) // a view under the URI its subscribers know
	}
}

// caller is who a call is made for: its client session, by id; or, on
// the stateless protocol (2026-07-28), the request itself (never the empty
// session id, which every such request shares).
type caller struct {
	session string
	request server.ClientSession // set only when session is ""
}

// callerOf is the caller of the call of ctx.
func callerOf(ctx context.Context) caller {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil {
		return caller{}
	}
	if id := cs.SessionID(); id != "" {
		return caller{session: id}
	}
	if !reflect.TypeOf(cs).Comparable() {
		return caller{} // no session of mcp-go's is; a map key must be
	}
	return caller{request: cs}
}
