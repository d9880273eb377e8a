package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// callRequestSeq numbers the tools/call requests callOnce sends (string
// ids, never colliding with mcp-go's).
var callRequestSeq atomic.Uint64

// callOnce sends req on c and decodes the result once, where mcp-go's
// client decodes it three times; on the stateless revision (2026-07-28)
// through mcp-go, which alone builds the _meta its requests carry.
func callOnce(ctx context.Context, c *Conn, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if mcp.IsModernProtocol(c.client.ProtocolVersion()) {
		return c.client.CallTool(ctx, req)
	}
	id := "mcp-router/tools/call/" + strconv.FormatUint(callRequestSeq.Add(1), 10)
	var raw json.RawMessage
	var err error
	if c.stdin != nil {
		raw, err = callDirect(ctx, c, id, req.Params)
	} else {
		wire.Posts(ctx, id)
		raw, err = sendRaw(ctx, c.client.GetTransport(), id, mcp.MethodToolsCall, req.Params)
	}
	if err != nil {
		return nil, err
	}
	return decodeResult(raw)
}

// callDirect is sendRaw for a stdio child, with the reply handed straight
// to this call (wire.StdinTap.Send) rather than decoded by mcp-go's reader
// on its way; the errors are those of mcp-go's transport.
func callDirect(ctx context.Context, c *Conn, id string, params mcp.CallToolParams) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, transport.NewError(err)
	}
	rid := mcp.NewRequestId(id)
	idJSON, _ := json.Marshal(id)
	line, err := callRequestLine(id, idJSON, params)
	if err != nil {
		return nil, transport.NewError(fmt.Errorf("encoding the request: %w", err))
	}
	reply, err := c.stdin.Send(idJSON, line)
	if err != nil {
		return nil, transport.NewError(err)
	}
	select {
	case line, ok := <-reply:
		if !ok {
			return nil, transport.NewError(transport.ErrTransportClosed)
		}
		var resp struct { // the id is the one Send waited for
			Result json.RawMessage          `json:"result"`
			Error  *mcp.JSONRPCErrorDetails `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			return nil, transport.NewError(fmt.Errorf("decoding the reply: %w", err))
		}
		if resp.Error != nil {
			return nil, resp.Error.AsError()
		}
		return resp.Result, nil
	case <-ctx.Done():
		cancelListing(ctx, c.client.GetTransport(), rid)
		return nil, transport.NewError(ctx.Err())
	case <-c.lost:
		return nil, transport.NewError(c.lostErr())
	}
}

// callRequestLine is the line of a tools/call request: what json.Marshal
// writes for mcp-go's request (but for escaping <, > and &), with the
// client's raw arguments written as they came, on one line, rather than
// compacted again at every level. A task or a multi-round-trip answer is
// marshaled mcp-go's way.
func callRequestLine(id string, idJSON json.RawMessage, p mcp.CallToolParams) ([]byte, error) {
	args := p.RawArguments
	if raw, ok := p.Arguments.(json.RawMessage); ok && len(args) == 0 {
		args = raw
	}
	if p.Task != nil || p.InputResponses != nil || p.RequestState != "" || (len(args) == 0 && p.Arguments != nil) {
		line, err := json.Marshal(transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: string(mcp.MethodToolsCall), Params: p})
		return append(line, '\n'), err
	}
	name, err := json.Marshal(p.Name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 160+len(args)+len(name)) // room for a progress token
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, idJSON...)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = append(b, name...)
	if len(args) > 0 {
		b = append(b, `,"arguments":`...)
		if b, err = appendOneLine(b, args); err != nil {
			return nil, err
		}
	}
	if m := p.Meta; m != nil {
		b = append(b, `,"_meta":`...)
		var meta []byte
		if len(m.AdditionalFields) == 0 && m.ProgressToken != nil { // as Meta.MarshalJSON writes a token alone
			b = append(b, `{"progressToken":`...)
			meta, err = json.Marshal(m.ProgressToken)
			meta = append(meta, '}')
		} else {
			meta, err = json.Marshal(m)
		}
		if err != nil {
			return nil, err
		}
		b = append(b, meta...)
	}
	return append(b, "}}\n"...), nil
}

// appendOneLine appends v, one JSON value, compacted if it spans lines.
func appendOneLine(dst []byte, v json.RawMessage) ([]byte, error) {
	if !json.Valid(v) {
		return dst, fmt.Errorf("arguments: invalid JSON")
	}
	if !bytes.ContainsAny(v, "\r\n") {
		return append(dst, v...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, v); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// leanResult is the result most tools return: text items, an error flag
// and structured content. The members typed json.RawMessage are those
// mcp-go reads that a lean result lacks (mcp-go ignores any other).
type leanResult struct {
	Content []struct {
		Type        string          `json:"type"`
		Text        *string         `json:"text"`
		Annotations json.RawMessage `json:"annotations"`
		Meta        json.RawMessage `json:"_meta"`
	} `json:"content"`
	IsError           bool            `json:"isError"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Meta              json.RawMessage `json:"_meta"`
	ResultType        json.RawMessage `json:"resultType"`
	InputRequests     json.RawMessage `json:"inputRequests"`
	RequestState      json.RawMessage `json:"requestState"`
}

// decodeResult decodes a tools/call result as mcp.ParseCallToolResult
// does: a leanResult in one pass, any other mcp-go's way.
func decodeResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var lean leanResult
	if json.Unmarshal(raw, &lean) != nil || lean.Content == nil || string(lean.StructuredContent) == "null" ||
		lean.Meta != nil || lean.ResultType != nil || lean.InputRequests != nil || lean.RequestState != nil {
		return mcp.ParseCallToolResult(&raw)
	}
	res := &mcp.CallToolResult{IsError: lean.IsError}
	if len(lean.Content) > 0 { // mcp-go leaves an empty list nil
		res.Content = make([]mcp.Content, len(lean.Content))
	}
	for i, c := range lean.Content {
		if c.Type != "text" || c.Text == nil || c.Annotations != nil || c.Meta != nil {
			return mcp.ParseCallToolResult(&raw)
		}
		res.Content[i] = mcp.TextContent{Type: c.Type, Text: *c.Text}
	}
	if len(lean.StructuredContent) > 0 {
		res.RawStructuredContent = lean.StructuredContent
		if err := json.Unmarshal(lean.StructuredContent, &res.StructuredContent); err != nil {
			return nil, err
		}
	}
	return res, nil
}
