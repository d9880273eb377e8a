package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Relay is where the hub sends what an upstream asks of, or tells, the
// client on whose behalf it is working: sampling and elicitation requests
// and log messages go to the client whose call is in progress on that
// upstream; resource updates go to the clients subscribed to the URI.
// The Server implements it.
type Relay interface {
	CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
	Log(ctx context.Context, n mcp.LoggingMessageNotification)
	ResourceUpdated(uri string)
}

// ErrNoCaller is the answer to an upstream's request to the client when no
// client call is in progress on that upstream (nobody to ask).
var ErrNoCaller = errors.New("no client call in progress on this upstream to ask")

// SetRelay sets where upstream requests and notifications for clients go.
func (h *Hub) SetRelay(r Relay) { h.relay.Store(&r) }

func (h *Hub) relayTo() Relay {
	if r := h.relay.Load(); r != nil {
		return *r
	}
	return nil
}

// callers tracks the client contexts of the calls in progress on one
// upstream, oldest first: a request the upstream makes mid-call goes to the
// newest, as the one most likely waiting on it.
type callers struct {
	mu   sync.Mutex
	next uint64
	ctxs map[uint64]context.Context
}

func (c *callers) add(ctx context.Context) (done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctxs == nil {
		c.ctxs = map[uint64]context.Context{}
	}
	c.next++
	id := c.next
	c.ctxs[id] = ctx
	return func() {
		c.mu.Lock()
		delete(c.ctxs, id)
		c.mu.Unlock()
	}
}

// latest is the context of the newest call in progress.
func (c *callers) latest() (context.Context, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best uint64
	for id := range c.ctxs {
		best = max(best, id)
	}
	ctx, ok := c.ctxs[best]
	return ctx, ok
}

// bySession is one context per client session with a call in progress.
func (c *callers) bySession() []context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]uint64, 0, len(c.ctxs))
	for id := range c.ctxs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	seen := map[string]bool{}
	var out []context.Context
	for _, id := range ids {
		ctx := c.ctxs[id]
		if sid := sessionID(ctx); !seen[sid] {
			seen[sid] = true
			out = append(out, ctx)
		}
	}
	return out
}

// upstreamHandlers are the client options that let an upstream ask the
// client for sampling and elicitation through the relay.
func (u *upstream) handlerOptions() []client.ClientOption {
	return []client.ClientOption{
		client.WithSamplingHandler(samplingHandler{u}),
		client.WithElicitationHandler(elicitationHandler{u}),
	}
}

type samplingHandler struct{ u *upstream }

func (s samplingHandler) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	ctx, r, err := s.u.caller()
	if err != nil {
		return nil, fmt.Errorf("sampling/createMessage: %w", err)
	}
	return r.CreateMessage(ctx, req)
}

type elicitationHandler struct{ u *upstream }

func (e elicitationHandler) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	ctx, r, err := e.u.caller()
	if err != nil {
		return nil, fmt.Errorf("elicitation/create: %w", err)
	}
	return r.Elicit(ctx, req)
}

// caller is the context of the client call the upstream is working on.
func (u *upstream) caller() (context.Context, Relay, error) {
	r := u.hub.relayTo()
	if r == nil {
		return nil, nil, ErrNoCaller
	}
	ctx, ok := u.calls.latest()
	if !ok {
		return nil, nil, ErrNoCaller
	}
	return ctx, r, nil
}

// relayLog passes an upstream's log message to the clients with a call in
// progress on it; with none, it goes to our own log.
func (u *upstream) relayLog(n mcp.JSONRPCNotification) {
	var msg mcp.LoggingMessageNotification
	b, _ := json.Marshal(n)
	if json.Unmarshal(b, &msg) != nil {
		return
	}
	msg.Method = string(mcp.MethodNotificationMessage)
	msg.Params.Data = u.scrub.value(msg.Params.Data) // no configured secret reaches a client
	ctxs := u.calls.bySession()
	r := u.hub.relayTo()
	if r == nil || len(ctxs) == 0 {
		u.logger.Debug("upstream log", "level", msg.Params.Level, "logger", msg.Params.Logger)
		return
	}
	for _, ctx := range ctxs {
		r.Log(ctx, msg)
	}
}

func (u *upstream) relayResourceUpdated(n mcp.JSONRPCNotification) {
	uri, _ := n.Params.AdditionalFields["uri"].(string)
	if r := u.hub.relayTo(); r != nil && uri != "" {
		r.ResourceUpdated(uri)
	}
}

// Complete asks the upstream that owns a prompt or resource template for
// argument completions; the reference is rewritten to the upstream's own
// prompt name.
func (h *Hub) Complete(ctx context.Context, params mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var up string
	switch ref := params.Ref.(type) {
	case mcp.PromptReference:
		p, ok := h.Catalog().Prompt(ref.Name)
		if !ok {
			return nil, fmt.Errorf("unknown prompt %q", ref.Name)
		}
		up, ref.Name = p.Upstream, p.Original
		params.Ref = ref
	case mcp.ResourceReference:
		up = h.Catalog().resourceOwner(ref.URI)
		if up == "" {
			return nil, fmt.Errorf("no upstream offers resource %q", ref.URI)
		}
	default:
		return nil, fmt.Errorf("unknown completion reference %T", params.Ref)
	}
	c, u, err := h.connOf(up)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, u.cfg.callTimeout())
	defer cancel()
	req := mcp.CompleteRequest{Params: params}
	res, err := c.client.Complete(ctx, req)
	if err != nil {
		return nil, h.errorText(u.cfg, u.scrub, "completion", err)
	}
	return res, nil
}

// Subscribe asks the upstream that offers uri for its updates (when it
// can send them), or, with subscribe false, to stop.
func (h *Hub) Subscribe(ctx context.Context, uri string, subscribe bool) error {
	up := h.Catalog().resourceOwner(uri)
	if up == "" {
		return fmt.Errorf("no upstream offers resource %q", uri)
	}
	c, u, err := h.connOf(up)
	if err != nil {
		return err
	}
	if c.caps.Resources == nil || !c.caps.Resources.Subscribe {
		return nil // it sends no updates; nothing to ask
	}
	method := "resources/unsubscribe"
	if subscribe {
		method = "resources/subscribe"
	}
	ctx, cancel := context.WithTimeout(ctx, u.cfg.callTimeout())
	defer cancel()
	id := h.subID.Add(1)
	resp, err := c.client.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(fmt.Sprintf("mcp-router-sub-%d", id)),
		Method: method, Params: map[string]any{"uri": uri},
	})
	if err != nil {
		return fmt.Errorf("%s %s on %s: %w", method, uri, up, h.errorText(u.cfg, u.scrub, method, err))
	}
	if resp.Error != nil {
		return fmt.Errorf("%s %s on %s: %w", method, uri, up, h.errorText(u.cfg, u.scrub, method, errors.New(resp.Error.Message)))
	}
	return nil
}

func (h *Hub) connOf(upstreamName string) (*conn, *upstream, error) {
	u, ok := h.byName[upstreamName]
	if !ok {
		return nil, nil, fmt.Errorf("unknown upstream %q", upstreamName)
	}
	c, err := u.current()
	if err != nil {
		return nil, nil, fmt.Errorf("upstream %s: %w", upstreamName, err)
	}
	return c, u, nil
}

// resourceOwner is the upstream offering uri: by its resources, else by
// the one upstream whose resource templates could produce it.
func (c *Catalog) resourceOwner(uri string) string {
	for _, r := range c.Resources {
		if r.Def.URI == uri {
			return r.Upstream
		}
	}
	for _, t := range c.Templates {
		if t.Def.URITemplate != nil && t.Def.URITemplate.Regexp().MatchString(uri) {
			return t.Upstream
		}
	}
	return ""
}
