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

// mcp-go's client decodes each tool's inputSchema and outputSchema into a
// fixed struct (type, properties, required, additionalProperties, $defs)
// and keeps no raw bytes, so any other keyword an upstream declares at the
// top of a schema (anyOf, oneOf, allOf, $ref, description, if/then/else,
// ...) would vanish from the catalog, from what clients see and from
// argument checks: the gateway would change the tool's contract. So tools
// are listed through the client's transport, and each keeps its schemas
// as the upstream sent them, in RawInputSchema and RawOutputSchema.

// listRequestSeq numbers our own tools/list requests. Their ids are
// strings, so they can never collide with mcp-go's integer ids on the
// same connection.
var listRequestSeq atomic.Uint64

// maxListPages bounds how many pages one listing follows: an upstream
// that keeps handing out new cursors is cut off rather than followed
// until the listing times out, its tools piling up in memory.
const maxListPages = 1000

// rpcSender is the part of an mcp-go transport the listing uses.
type rpcSender interface {
	SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error)
	SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error
}

// listTools lists the upstream's tools, every page, schemas intact. A
// connection on the stateless protocol revision (2026-07-28) is listed
// through mcp-go, whose typed schemas lose keywords: every request there
// carries protocol metadata in _meta (the client's effective
// capabilities, its level, its identity) that only mcp-go's unexported
// request path builds.
func listTools(ctx context.Context, cl *client.Client, b *listBudget, logger *slog.Logger) ([]mcp.Tool, error) {
	if mcp.IsModernProtocol(cl.ProtocolVersion()) {
		return listTypedTools(ctx, cl, b)
	}
	return listRawTools(ctx, cl.GetTransport(), b, logger)
}

// listRawTools follows tools/list pages until one has no nextCursor,
// within the budget (see listAll).
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

// tools returns the page's tools with their raw schemas. A tool whose
// schema is not a JSON object breaks the protocol and would break
// clients' listings: it is left out, and logged.
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

// listToolsPage sends one tools/list request, with an id of our own, and
// returns the page with its size in bytes.
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

// sendRaw sends one request with the id of our own through tr and returns
// its result as the upstream sent it. A request whose caller gives up is
// cancelled on the upstream (cancelListing), as mcp-go cancels its own.
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
// request of ours (a listing, a raw call) the caller gave up on, as mcp-go does for its own requests; over
// HTTP nothing is sent, as by mcp-go. The notification is sent off the
// caller's path, best effort: its goroutine ends once the write is done,
// or fails when the connection closes.
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
