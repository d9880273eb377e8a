package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// Defaults of Config.MaxListingBytes and MaxListingItems.
const (
	DefaultMaxListingBytes = 64 << 20
	DefaultMaxListingItems = 10000
)

// ErrListingTooLarge is returned when a listing passes its bounds across
// its pages.
var ErrListingTooLarge = errors.New("listing too large")

// listBudget is what one listing may still take.
type listBudget struct {
	method             string
	maxBytes, maxItems int
	bytes, items       int
}

func (u Config) listBudget(method string) *listBudget {
	return &listBudget{method: method, maxBytes: cmp.Or(max(u.MaxListingBytes, 0), DefaultMaxListingBytes),
		maxItems: cmp.Or(max(u.MaxListingItems, 0), DefaultMaxListingItems)}
}

// take counts one page of items and bytes, and fails past a bound.
func (b *listBudget) take(items, bytes int) error {
	b.items += items
	b.bytes += bytes
	switch {
	case b.items > b.maxItems:
		return fmt.Errorf("%w: %s: more than %d items across its pages", ErrListingTooLarge, b.method, b.maxItems)
	case b.bytes > b.maxBytes:
		return fmt.Errorf("%w: %s: more than %d bytes across its pages", ErrListingTooLarge, b.method, b.maxBytes)
	}
	return nil
}

// page is one page of a listing, its size in bytes and the next cursor.
type page[T any] struct {
	items []T
	bytes int
	next  mcp.Cursor
}

// listAll follows a listing's pages with fetch within the budget and
// maxListPages (mcp-go's own List* follow pages without bound). A cursor
// that comes back twice is an error, as for mcp-go.
func listAll[T any](ctx context.Context, b *listBudget, fetch func(context.Context, mcp.PaginatedRequest) (page[T], error)) ([]T, error) {
	var all []T
	seen := map[mcp.Cursor]bool{"": true}
	var req mcp.PaginatedRequest
	for range maxListPages {
		p, err := fetch(ctx, req)
		if err != nil {
			return nil, err
		}
		if err := b.take(len(p.items), p.bytes); err != nil {
			return nil, err
		}
		all = append(all, p.items...)
		if p.next == "" {
			return all, nil
		}
		if seen[p.next] {
			return nil, fmt.Errorf("%w: %q", client.ErrRepeatedListCursor, p.next)
		}
		seen[p.next] = true
		req.Params.Cursor = p.next
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: more than %d pages", b.method, maxListPages)
}

// sizeOf is the size of a decoded page as JSON.
func sizeOf(v any) int {
	data, _ := json.Marshal(v)
	return len(data)
}

func listResources(ctx context.Context, cl *client.Client, b *listBudget) ([]mcp.Resource, error) {
	return listAll(ctx, b, func(ctx context.Context, p mcp.PaginatedRequest) (page[mcp.Resource], error) {
		r, err := cl.ListResourcesByPage(ctx, mcp.ListResourcesRequest{PaginatedRequest: p})
		if err != nil {
			return page[mcp.Resource]{}, err
		}
		return page[mcp.Resource]{r.Resources, sizeOf(r), r.NextCursor}, nil
	})
}

func listResourceTemplates(ctx context.Context, cl *client.Client, b *listBudget) ([]mcp.ResourceTemplate, error) {
	return listAll(ctx, b, func(ctx context.Context, p mcp.PaginatedRequest) (page[mcp.ResourceTemplate], error) {
		r, err := cl.ListResourceTemplatesByPage(ctx, mcp.ListResourceTemplatesRequest{PaginatedRequest: p})
		if err != nil {
			return page[mcp.ResourceTemplate]{}, err
		}
		return page[mcp.ResourceTemplate]{r.ResourceTemplates, sizeOf(r), r.NextCursor}, nil
	})
}

func listPrompts(ctx context.Context, cl *client.Client, b *listBudget) ([]mcp.Prompt, error) {
	return listAll(ctx, b, func(ctx context.Context, p mcp.PaginatedRequest) (page[mcp.Prompt], error) {
		r, err := cl.ListPromptsByPage(ctx, mcp.ListPromptsRequest{PaginatedRequest: p})
		if err != nil {
			return page[mcp.Prompt]{}, err
		}
		return page[mcp.Prompt]{r.Prompts, sizeOf(r), r.NextCursor}, nil
	})
}

// listRequestSeq numbers our own tools/list requests. Their ids are
// strings, never colliding with mcp-go's integer ids.
var listRequestSeq atomic.Uint64

// maxListPages bounds how many pages one listing follows.
const maxListPages = 1000

// rpcSender is the part of an mcp-go transport the listing uses.
type rpcSender interface {
	SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error)
	SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error
}

// listTools lists the upstream's tools, every page, with their schemas as
// sent: mcp-go's typed schemas drop every keyword they do not know (anyOf,
// $ref, ...), which would change the tool's contract. A connection on the
// stateless revision (2026-07-28) is listed through mcp-go all the same:
// only its unexported request path builds the _meta those requests carry.
func listTools(ctx context.Context, cl *client.Client, b *listBudget, logger *slog.Logger) ([]mcp.Tool, error) {
	if !mcp.IsModernProtocol(cl.ProtocolVersion()) {
		return listRawTools(ctx, cl.GetTransport(), b, logger)
	}
	return listAll(ctx, b, func(ctx context.Context, p mcp.PaginatedRequest) (page[mcp.Tool], error) {
		r, err := cl.ListToolsByPage(ctx, mcp.ListToolsRequest{PaginatedRequest: p})
		if err != nil {
			return page[mcp.Tool]{}, err
		}
		return page[mcp.Tool]{r.Tools, sizeOf(r), r.NextCursor}, nil
	})
}

// listRawTools follows tools/list pages within the budget.
func listRawTools(ctx context.Context, tr rpcSender, b *listBudget, logger *slog.Logger) ([]mcp.Tool, error) {
	return listAll(ctx, b, func(ctx context.Context, req mcp.PaginatedRequest) (page[mcp.Tool], error) {
		p, size, err := listToolsPage(ctx, tr, req.Params.Cursor)
		if err != nil {
			return page[mcp.Tool]{}, err
		}
		return page[mcp.Tool]{p.tools(logger), size, p.NextCursor}, nil
	})
}

// toolsPage is one tools/list result.
type toolsPage struct {
	Tools      []wireTool `json:"tools"`
	NextCursor mcp.Cursor `json:"nextCursor"`
}

// wireTool decodes a tool with its schemas left raw: the two fields
// shadow mcp.Tool's typed ones, which are then never decoded.
type wireTool struct {
	mcp.Tool
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// tools returns the page's tools with their raw schemas, leaving out (and
// logging) those whose schema is not a JSON object.
func (p toolsPage) tools(logger *slog.Logger) []mcp.Tool {
	out := make([]mcp.Tool, 0, len(p.Tools))
	for _, w := range p.Tools {
		t := w.Tool
		t.RawInputSchema, t.RawOutputSchema = presentSchema(w.InputSchema), presentSchema(w.OutputSchema)
		if bad := notObject(t.RawInputSchema); bad != "" {
			logger.Warn("tool left out: its inputSchema is not a JSON object", "tool", t.Name, "got", bad)
		} else if bad := notObject(t.RawOutputSchema); bad != "" {
			logger.Warn("tool left out: its outputSchema is not a JSON object", "tool", t.Name, "got", bad)
		} else {
			out = append(out, t)
		}
	}
	return out
}

// presentSchema is raw, or nil when the schema is absent or null.
func presentSchema(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// notObject says what kind of JSON value raw is when it is present and
// not an object, and "" otherwise.
func notObject(raw json.RawMessage) string {
	if raw == nil || raw[0] == '{' { // decoded JSON: no leading space
		return ""
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// listToolsPage sends one tools/list request and returns the page with
// its size in bytes.
func listToolsPage(ctx context.Context, tr rpcSender, cursor mcp.Cursor) (toolsPage, int, error) {
	id := "mcp-router/tools/list/" + strconv.FormatUint(listRequestSeq.Add(1), 10)
	raw, err := sendRaw(ctx, tr, id, mcp.MethodToolsList, mcp.PaginatedParams{Cursor: cursor})
	if err != nil {
		return toolsPage{}, 0, err
	}
	var page toolsPage
	if err := json.Unmarshal(raw, &page); err != nil {
		return toolsPage{}, 0, fmt.Errorf("decoding the tools/list result: %w", err)
	}
	return page, len(raw), nil
}

// sendRaw sends one request with our own id through tr and returns its
// result as sent, cancelling it upstream if the caller gives up.
func sendRaw(ctx context.Context, tr rpcSender, id string, method mcp.MCPMethod, params any) (json.RawMessage, error) {
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: string(method), Params: params}
	if err := ctx.Err(); err != nil {
		return nil, transport.NewError(err)
	}
	resp, err := tr.SendRequest(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			cancelListing(ctx, tr, req.ID)
		}
		return nil, transport.NewError(err)
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	return resp.Result, nil
}

// cancelListing tells a stdio or in-process upstream to stop working on a
// request of ours the caller gave up on, as mcp-go does (nothing over
// HTTP). It is sent best effort off the caller's path; the goroutine ends
// within a second.
func cancelListing(ctx context.Context, tr rpcSender, id mcp.RequestId) {
	if _, ok := tr.(transport.HTTPConnection); ok {
		return
	}
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": ctx.Err().Error()}},
		},
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_ = tr.SendNotification(ctx, n)
	}()
}

// vetOffer scans the resources, templates and prompts of l for poisoning,
// logging what it finds as for a tool; under quarantine it leaves out
// those flagged until a listing of them is clean (they have no pins to
// approve), noting the resources' URIs, which a template may also match.
func (u *Upstream) vetOffer(l *Listing) {
	l.Resources = slices.DeleteFunc(l.Resources, func(r mcp.Resource) bool {
		bad := u.poisoned("resource", "resource", r.URI, r)
		if bad {
			l.Withheld = append(l.Withheld, r.URI)
		}
		return bad
	})
	l.Templates = slices.DeleteFunc(l.Templates, func(t mcp.ResourceTemplate) bool { return u.poisoned("resource template", "template", t.Name, t) })
	l.Prompts = slices.DeleteFunc(l.Prompts, func(p mcp.Prompt) bool { return u.poisoned("prompt", "prompt", p.Name, p) })
}

// poisoned logs what integrity.ScanEntry finds in entry, a what named
// name (logged under key), and reports whether the policy hides it.
func (u *Upstream) poisoned(what, key, name string, entry any) bool {
	findings := integrity.ScanEntry(entry)
	for _, f := range findings {
		u.logger.Warn(what+" poisoning suspected", key, name, "field", f.Field, "kind", f.Kind, "detail", f.Detail)
	}
	if !u.env.Poisoning.Blocks(findings, false) {
		return false
	}
	u.logger.Error(what+" quarantined", key, name, "findings", len(findings))
	return true
}
