package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
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
func listAll[T any](ctx context.Context, b *listBudget, fetch func(context.Context, mcp.Cursor) (page[T], error)) ([]T, error) {
	var all []T
	seen := map[mcp.Cursor]bool{"": true}
	var cursor mcp.Cursor
	for range maxListPages {
		p, err := fetch(ctx, cursor)
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
		cursor = p.next
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
	return listAll(ctx, b, func(ctx context.Context, c mcp.Cursor) (page[mcp.Resource], error) {
		var req mcp.ListResourcesRequest
		req.Params.Cursor = c
		r, err := cl.ListResourcesByPage(ctx, req)
		if err != nil {
			return page[mcp.Resource]{}, err
		}
		return page[mcp.Resource]{r.Resources, sizeOf(r), r.NextCursor}, nil
	})
}

func listResourceTemplates(ctx context.Context, cl *client.Client, b *listBudget) ([]mcp.ResourceTemplate, error) {
	return listAll(ctx, b, func(ctx context.Context, c mcp.Cursor) (page[mcp.ResourceTemplate], error) {
		var req mcp.ListResourceTemplatesRequest
		req.Params.Cursor = c
		r, err := cl.ListResourceTemplatesByPage(ctx, req)
		if err != nil {
			return page[mcp.ResourceTemplate]{}, err
		}
		return page[mcp.ResourceTemplate]{r.ResourceTemplates, sizeOf(r), r.NextCursor}, nil
	})
}

func listPrompts(ctx context.Context, cl *client.Client, b *listBudget) ([]mcp.Prompt, error) {
	return listAll(ctx, b, func(ctx context.Context, c mcp.Cursor) (page[mcp.Prompt], error) {
		var req mcp.ListPromptsRequest
		req.Params.Cursor = c
		r, err := cl.ListPromptsByPage(ctx, req)
		if err != nil {
			return page[mcp.Prompt]{}, err
		}
		return page[mcp.Prompt]{r.Prompts, sizeOf(r), r.NextCursor}, nil
	})
}

// listTypedTools lists tools through mcp-go (see listTools).
func listTypedTools(ctx context.Context, cl *client.Client, b *listBudget) ([]mcp.Tool, error) {
	return listAll(ctx, b, func(ctx context.Context, c mcp.Cursor) (page[mcp.Tool], error) {
		var req mcp.ListToolsRequest
		req.Params.Cursor = c
		r, err := cl.ListToolsByPage(ctx, req)
		if err != nil {
			return page[mcp.Tool]{}, err
		}
		return page[mcp.Tool]{r.Tools, sizeOf(r), r.NextCursor}, nil
	})
}
