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

	"github.com/mcp-router/mcp-router/proxy/apps"
)

// Relay is where what an upstream asks of, or tells, the client on whose
// behalf it is working goes: sampling and elicitation requests and log
// messages go to the client whose call caused them, and to no other;
// resource updates go to the clients subscribed to the URI. The Server
// implements it and sets it with [Hub.SetRelay]; the hub hands it on to
// each upstream.
type Relay interface {
	CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
	Log(ctx context.Context, n mcp.LoggingMessageNotification)
	ResourceUpdated(uri string)
}

// ErrNoCaller is the answer to an upstream's request to the client when no
// client call is in progress on that upstream (nobody to ask).
var ErrNoCaller = errors.New("no client call in progress on this upstream to ask")

// ErrAmbiguousCaller is the answer to an upstream's request to the client
// when calls of several client sessions are in progress on the upstream
// and the request does not show which of them it belongs to: asking any
// one of them could show it another client's request, or feed another
// client's answer into the call.
var ErrAmbiguousCaller = errors.New("calls of several clients are in progress on this upstream " +
	"and the request does not show which one it belongs to")

// callers tracks the client contexts of the calls in progress on one
// upstream, so that what the upstream sends mid-call reaches the client of
// that call and no other.
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
// it upstream with (marked, so that a request that comes back with it can
// be told apart) and the func that ends the record.
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
// notification belongs to:
//
//   - the call hint is marked with (add), when the transport handed the
//     request over with the call's context (a streamable HTTP upstream's
//     request on the call's response stream). When that call is over,
//     nobody (ErrNoCaller): it is not passed to another call;
//   - else, when every call in progress belongs to one caller (callerOf),
//     the newest of them;
//   - else nobody: ErrNoCaller with no call in progress, ErrAmbiguousCaller
//     with calls of several callers (the gateway cannot tell whose it is
//     and does not guess).
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

// upstreamHandlers are the client options that let an upstream ask the
// client for sampling and elicitation through the relay. Roots are not
// offered: an upstream's roots/list is refused, as the gateway declares no
// roots of its own and will not pass on one client's.
func (u *Upstream) handlerOptions() []client.ClientOption {
	return []client.ClientOption{
		client.WithSamplingHandler(samplingHandler{u}),
		client.WithElicitationHandler(elicitationHandler{u}),
	}
}

type samplingHandler struct{ u *Upstream }

func (s samplingHandler) CreateMessage(hint context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	ctx, r, err := s.u.caller(hint, "sampling/createMessage")
	if err != nil {
		return nil, err
	}
	return r.CreateMessage(ctx, req)
}

type elicitationHandler struct{ u *Upstream }

func (e elicitationHandler) Elicit(hint context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	ctx, r, err := e.u.caller(hint, "elicitation/create")
	if err != nil {
		return nil, err
	}
	return r.Elicit(ctx, req)
}

// caller is the context of the client call that an upstream's request
// belongs to, or why there is none (the upstream gets it as a JSON-RPC
// error).
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
// progress on it. A notification says nothing of the call it belongs to:
// with calls of several clients in progress, or none, it goes to our own
// log only.
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
		r.ResourceUpdated(apps.URI(u.cfg.Name, uri)) // a view under the URI its subscribers know
	}
}

// caller is who a call is made for: its client session, by id; or, on
// the stateless protocol (2026-07-28), where no request carries a session
// id, the request itself (the session value mcp-go makes for it alone).
// An empty session id is never a caller shared by every such request.
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
