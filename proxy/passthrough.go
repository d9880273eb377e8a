package proxy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/apps"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/proxy/results"
)

var _ Relay = (*Server)(nil)

// CreateMessage asks the client of ctx's call to sample.
func (s *Server) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	if caps, ok := clientCapabilities(ctx); ok && caps.Sampling == nil {
		return nil, errors.New("the client did not declare the sampling capability")
	}
	//lint:ignore SA1019 sampling is passed through for clients of 2025-11-25, which still have it
	return s.mcp.RequestSampling(ctx, req)
}

// clientCapabilities are what the client of ctx declared, when known.
func clientCapabilities(ctx context.Context) (mcp.ClientCapabilities, bool) {
	if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return cs.GetClientCapabilities(), true
	}
	return mcp.ClientCapabilities{}, false
}

// Elicit asks the client of ctx's call for input (an upstream asked).
func (s *Server) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	if caps, ok := clientCapabilities(ctx); ok && caps.Elicitation == nil {
		return nil, errors.New("the client did not declare the elicitation capability")
	}
	return s.mcp.RequestElicitation(ctx, req)
}

// Log sends an upstream's log message to the client of ctx's call.
func (s *Server) Log(ctx context.Context, n mcp.LoggingMessageNotification) {
	if err := s.mcp.SendLogMessageToClient(ctx, n); err != nil {
		s.logger.Debug("upstream log not relayed", "session_id", sessionTagOf(ctx), "err", err)
	}
}

// ResourceUpdated tells the clients subscribed to uri that it changed,
// when upstream is the one that offers it.
func (s *Server) ResourceUpdated(upstream, uri string) {
	if owner := s.hub.Catalog().resourceOwner(uri); owner != upstream {
		s.logger.Debug("resource update not relayed: the upstream does not offer it", "upstream", upstream, "owner", owner)
		return
	}
	for _, id := range s.subs.sessions(uri) {
		err := s.mcp.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationResourceUpdated), map[string]any{"uri": uri})
		if err != nil {
			s.logger.Debug("resource update not sent", "session_id", call.SessionTag(id), "err", err)
		}
	}
}

// completer routes completion/complete to the upstream that owns the
// prompt or resource template.
type completer struct{ hub *Hub }

func (c completer) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return c.complete(ctx, mcp.CompleteParams{Ref: mcp.PromptReference{Type: "ref/prompt", Name: name}, Argument: arg, Context: cc})
}

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return c.complete(ctx, mcp.CompleteParams{Ref: mcp.ResourceReference{Type: "ref/resource", URI: uri}, Argument: arg, Context: cc})
}

func (c completer) complete(ctx context.Context, p mcp.CompleteParams) (*mcp.Completion, error) {
	res, err := c.hub.Complete(ctx, p)
	if err != nil {
		return nil, err
	}
	return &res.Completion, nil
}

// Bounds on a session's subscriptions, lest a client grow the gateway's
// memory one long made-up URI at a time.
const (
	maxSessionSubscriptions = 256     // URIs one session follows
	maxSubscribedURI        = 4 << 10 // bytes of a URI followed
)

// subscriptions tracks which sessions follow which resource URIs, so the
// upstream is asked once per URI and updates reach only them.
type subscriptions struct {
	mu   sync.Mutex
	uris map[string]map[string]bool // uri -> session ids
	held map[string]int             // session id -> URIs it follows
}

// add records a subscription, within the session's bound, and reports
// whether it is the URI's first.
func (t *subscriptions) add(uri, session string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.uris == nil {
		t.uris, t.held = map[string]map[string]bool{}, map[string]int{}
	}
	if t.uris[uri][session] || t.held[session] >= maxSessionSubscriptions {
		return false
	}
	first := len(t.uris[uri]) == 0
	if t.uris[uri] == nil {
		t.uris[uri] = map[string]bool{}
	}
	t.uris[uri][session] = true
	t.held[session]++
	return first
}

// remove drops a subscription and reports whether the URI has none left.
func (t *subscriptions) remove(uri, session string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.uris[uri][session] {
		return false
	}
	delete(t.uris[uri], session)
	if t.held[session]--; t.held[session] == 0 {
		delete(t.held, session)
	}
	if len(t.uris[uri]) == 0 {
		delete(t.uris, uri)
		return true
	}
	return false
}

// dropSession forgets a session's subscriptions and returns the URIs no
// session follows any more.
func (t *subscriptions) dropSession(session string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var gone []string
	delete(t.held, session)
	for uri, ids := range t.uris {
		if ids[session] {
			delete(ids, session)
			if len(ids) == 0 {
				delete(t.uris, uri)
				gone = append(gone, uri)
			}
		}
	}
	return gone
}

func (t *subscriptions) sessions(uri string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Sorted(maps.Keys(t.uris[uri]))
}

// passthroughOptions give the server logging, completions and resource
// subscriptions, backed by the upstreams.
func (s *Server) passthroughOptions(hooks *server.Hooks) []server.ServerOption {
	hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		uri := req.Params.URI
		if len(uri) > maxSubscribedURI || s.hub.Catalog().resourceOwner(uri) == "" {
			return // nothing offers it: nothing to follow, nothing to keep
		}
		if s.subs.add(uri, call.SessionOf(ctx)) {
			s.subscribeUpstream(ctx, req.Params.URI, true)
		}
	})
	hooks.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if s.subs.remove(req.Params.URI, call.SessionOf(ctx)) {
			s.subscribeUpstream(ctx, req.Params.URI, false)
		}
	})
	hooks.AddOnUnregisterSession(func(ctx context.Context, cs server.ClientSession) {
		for _, uri := range s.subs.dropSession(cs.SessionID()) {
			s.subscribeUpstream(context.WithoutCancel(ctx), uri, false)
		}
	})
	c := completer{s.hub}
	return []server.ServerOption{
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(c),
		server.WithResourceCompletionProvider(c),
	}
}

func (s *Server) subscribeUpstream(ctx context.Context, uri string, on bool) {
	if err := s.hub.Subscribe(ctx, uri, on); err != nil {
		s.logger.Warn("resource subscription not passed upstream", "uri", fmt.Sprintf("%.200q", uri), "err", err)
	}
}

// Complete asks the upstream that owns a prompt or resource template for
// argument completions, the reference rewritten to the upstream's own.
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
		ref.URI = apps.Original(up, ref.URI)
		params.Ref = ref
	default:
		return nil, fmt.Errorf("unknown completion reference %T", params.Ref)
	}
	c, u, err := h.connOf(up)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, u.Config().EffectiveCallTimeout())
	defer cancel()
	ctx, done := u.WithCaller(ctx) // what the upstream asks meanwhile goes to this client
	defer done()
	req := mcp.CompleteRequest{Params: params}
	res, err := c.Client().Complete(ctx, req)
	if err != nil {
		return nil, h.errorText(u.Config(), u.Scrubber(), "completion", err)
	}
	for i, v := range res.Completion.Values { // what the model may pick: no configured secret
		res.Completion.Values[i] = u.Scrubber().Text(v)
	}
	return res, nil
}

// Subscribe asks the upstream that offers uri to start (or stop) sending
// its updates, when it can send them.
func (h *Hub) Subscribe(ctx context.Context, uri string, subscribe bool) error {
	up := h.Catalog().resourceOwner(uri)
	if up == "" {
		return fmt.Errorf("no upstream offers resource %q", uri)
	}
	c, u, err := h.connOf(up)
	if err != nil {
		return err
	}
	if c.Caps().Resources == nil || !c.Caps().Resources.Subscribe {
		return nil // it sends no updates; nothing to ask
	}
	method := "resources/unsubscribe"
	if subscribe {
		method = "resources/subscribe"
	}
	ctx, cancel := context.WithTimeout(ctx, u.Config().EffectiveCallTimeout())
	defer cancel()
	id := h.subID.Add(1)
	resp, err := c.Client().GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(fmt.Sprintf("mcp-router-sub-%d", id)),
		Method: method, Params: map[string]any{"uri": apps.Original(up, uri)},
	})
	if err != nil {
		return fmt.Errorf("%s %s on %s: %w", method, uri, up, h.errorText(u.Config(), u.Scrubber(), method, err))
	}
	if resp.Error != nil {
		return fmt.Errorf("%s %s on %s: %w", method, uri, up, h.errorText(u.Config(), u.Scrubber(), method, errors.New(resp.Error.Message)))
	}
	return nil
}

func (h *Hub) connOf(upstreamName string) (*upstream.Conn, *upstream.Upstream, error) {
	u, ok := h.set().byName[upstreamName]
	if !ok {
		return nil, nil, fmt.Errorf("unknown upstream %q", upstreamName)
	}
	c, err := u.Current()
	if err != nil {
		return nil, nil, fmt.Errorf("upstream %s: %w", upstreamName, err)
	}
	return c, u, nil
}

// resourceOwner is the upstream offering uri, by its resources or its
// templates; none for a kept result's URI, which is the gateway's own, nor
// for one that several upstreams offer or one quarantined.
func (c *Catalog) resourceOwner(uri string) string {
	if ups := c.uriOwners(uri); len(ups) == 1 && !strings.HasPrefix(uri, results.Scheme) && !c.quarantined[uri] {
		return ups[0]
	}
	return ""
}

// uriOwners are the upstreams that list uri or whose templates match it.
// When there are several, none is asked about uri: mcp-go matches
// templates in no fixed order, and one server's catch-all ({+uri}), or a
// resource it lists, would hear and answer another's URIs (SEC-10).
func (c *Catalog) uriOwners(uri string) []string {
	var ups []string
	for _, r := range c.Resources {
		if r.Def.URI == uri {
			ups = append(ups, r.Upstream) // at most one: the catalog keeps one resource per URI
		}
	}
	for _, t := range c.Templates {
		if t.Def.URITemplate != nil && !slices.Contains(ups, t.Upstream) && t.Def.URITemplate.Regexp().MatchString(uri) {
			ups = append(ups, t.Upstream)
		}
	}
	return ups
}

// startingScheme marks a resources/read whose URI no server offers yet
// while servers are still starting: holdReadForStart rewrites the URI to
// it, and readStarting says which servers are starting. No server's URI
// has this scheme, and resources/templates/list leaves its template out.
const startingScheme = "mcp-router://starting/"

// startingTemplate is the gateway's template of startingScheme.
func startingTemplate() mcp.ResourceTemplate {
	return mcp.NewResourceTemplate(startingScheme+"{+uri}", "mcp-router-starting")
}

// holdReadForStart is a resources/read hook for a URI the catalog does not
// offer while servers are still starting: it waits up to StartWait for
// their first attempts, as a tools/call waits, then lets mcp-go dispatch
// it, or sends it to readStarting when it is still nobody's.
func (s *Server) holdReadForStart(ctx context.Context, _ any, req *mcp.ReadResourceRequest) {
	ups := s.hub.starting() // first: once every server is up, a read pays nothing more
	if len(ups) == 0 {
		return
	}
	uri := req.Params.URI
	if strings.HasPrefix(uri, results.Scheme) || offersURI(s.hub.Catalog(), uri) {
		return
	}
	s.hub.awaitFirst(ctx, ups, time.Now().Add(s.hub.opts.StartWait))
	s.hub.settle() // a rebuild may be registering it: let it end
	if offersURI(s.hub.Catalog(), uri) || len(s.hub.starting()) == 0 {
		return
	}
	req.Params.URI = startingScheme + uri
}

// readStarting is the handler of startingScheme: the error of a read
// whose URI no server offers while some are still starting.
func (s *Server) readStarting(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := strings.TrimPrefix(req.Params.URI, startingScheme)
	names := upstreamNames(s.hub.starting())
	if len(names) == 0 {
		return nil, fmt.Errorf("handler not found for resource URI '%s': %w", uri, server.ErrResourceNotFound)
	}
	who := "server " + names[0] + " is"
	if len(names) > 1 {
		who = "servers " + strings.Join(names, ", ") + " are"
	}
	return nil, fmt.Errorf("resource %q is not offered yet: %s still starting (waited %s); try again shortly",
		uri, who, s.hub.opts.StartWait)
}

// hideStartingTemplate leaves startingScheme's template out of
// resources/templates/list: it is the gateway's plumbing, not a resource.
func hideStartingTemplate(_ context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
	if res == nil {
		return
	}
	res.ResourceTemplates = slices.DeleteFunc(res.ResourceTemplates, func(t mcp.ResourceTemplate) bool {
		return t.URITemplate != nil && strings.HasPrefix(t.URITemplate.Raw(), startingScheme)
	})
}

// offersURI reports whether c has a resource at uri or a template matching it.
func offersURI(c *Catalog, uri string) bool {
	for _, r := range c.Resources {
		if r.Def.URI == uri {
			return true
		}
	}
	for _, t := range c.Templates {
		if t.Def.URITemplate != nil && t.Def.URITemplate.Regexp().MatchString(uri) {
			return true
		}
	}
	return false
}

// holdPromptForStart is a prompts/get hook for a name not listed yet whose
// prefix is a server's still starting: it waits up to StartWait for it.
// When it is still missing, mcp-go's "not found" quotes the name with
// why: the server is still starting.
func (s *Server) holdPromptForStart(ctx context.Context, _ any, req *mcp.GetPromptRequest) {
	name := req.Params.Name
	if _, ok := s.hub.Catalog().Prompt(name); ok {
		return
	}
	u := s.hub.pendingOwner(name)
	if u == nil || !u.Starting() {
		return
	}
	s.hub.awaitFirst(ctx, []*upstream.Upstream{u}, time.Now().Add(s.hub.opts.StartWait))
	s.hub.settle()
	if _, ok := s.hub.Catalog().Prompt(name); ok || !u.Starting() {
		return
	}
	req.Params.Name = fmt.Sprintf("%s (server %s is still starting, waited %s; try again shortly)", name, u.Name(), s.hub.opts.StartWait)
}

// upstreamNames is the names of ups.
func upstreamNames(ups []*upstream.Upstream) []string {
	names := make([]string, len(ups))
	for i, u := range ups {
		names[i] = u.Name()
	}
	return names
}
