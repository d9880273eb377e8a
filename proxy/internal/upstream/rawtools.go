package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

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
	if mcp.IsModernProtocol(cl.ProtocolVersion()) {
		return listTypedTools(ctx, cl, b)
	}
	return listRawTools(ctx, cl.GetTransport(), b, logger)
}

// listRawTools follows tools/list pages within the budget.
func listRawTools(ctx context.Context, tr rpcSender, b *listBudget, logger *slog.Logger) ([]mcp.Tool, error) {
	return listAll(ctx, b, func(ctx context.Context, cursor mcp.Cursor) (page[mcp.Tool], error) {
		p, size, err := listToolsPage(ctx, tr, cursor)
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
