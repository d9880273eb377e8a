package proxy

// What a client asks of the upstreams besides tool calls, resources and
// prompts: completions, and subscriptions to a resource's updates, each
// passed to the upstream that offers what it names.

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

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
	ctx, cancel := context.WithTimeout(ctx, u.Config().EffectiveCallTimeout())
	defer cancel()
	ctx, done := u.WithCaller(ctx) // what the upstream asks meanwhile goes to this client
	defer done()
	req := mcp.CompleteRequest{Params: params}
	res, err := c.Client().Complete(ctx, req)
	if err != nil {
		return nil, h.errorText(u.Config(), u.Scrubber(), "completion", err)
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
		Method: method, Params: map[string]any{"uri": uri},
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
