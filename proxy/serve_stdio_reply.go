package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
	"github.com/mcp-router/mcp-router/proxy/metatools"
)

// appendCallReply appends msg and a newline to dst as a json.Encoder
// writes them, byte for byte, when msg is the reply to a tools/call; ok is
// false for any other message. It skips mcp-go's intermediate maps and the
// encoder's compaction, most of the cost of passing a result on; what it
// does not write itself it writes as json.Marshal does.
func appendCallReply(dst []byte, msg any) (_ []byte, ok bool) {
	r, ok := msg.(mcp.JSONRPCResponse)
	if !ok {
		return dst, false
	}
	var res *mcp.CallToolResult
	switch v := r.Result.(type) {
	case mcp.CallToolResult:
		res = &v
	case *mcp.CallToolResult:
		res = v
	}
	if res == nil || len(res.InputRequests) > 0 {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, `{"jsonrpc":`...)
	dst = appendJSONString(dst, r.JSONRPC)
	dst = append(dst, `,"id":`...)
	if dst, ok = appendJSONValue(dst, r.ID.Value()); !ok {
		return dst[:start], false
	}
	dst = append(dst, `,"result":`...)
	if dst, ok = appendCallResult(dst, res); !ok {
		return dst[:start], false
	}
	return append(dst, "}\n"...), true
}

// appendCallResult appends res as mcp.CallToolResult's MarshalJSON writes
// it: the fields it has, in the order of their names.
func appendCallResult(dst []byte, res *mcp.CallToolResult) (_ []byte, ok bool) {
	if dst, ok = appendOpenWithMeta(dst, res.Meta); !ok {
		return dst, false
	}
	dst = append(dst, `"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, ok = appendContent(dst, c); !ok {
			return dst, false
		}
	}
	dst = append(dst, ']')
	if res.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if res.RequestState != "" {
		dst = append(dst, `,"requestState":`...)
		dst = appendJSONString(dst, res.RequestState)
	}
	if res.ResultType != "" {
		dst = append(dst, `,"resultType":`...)
		dst = appendJSONString(dst, string(res.ResultType))
	}
	switch {
	case len(res.RawStructuredContent) > 0:
		dst = append(dst, `,"structuredContent":`...)
		if dst, ok = appendJSONValue(dst, json.RawMessage(res.RawStructuredContent)); !ok {
			return dst, false
		}
	case res.StructuredContent != nil:
		dst = append(dst, `,"structuredContent":`...)
		if dst, ok = appendJSONValue(dst, res.StructuredContent); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// appendContent appends a text item as encoding/json writes the struct,
// and any other item as json.Marshal writes it.
func appendContent(dst []byte, c mcp.Content) (_ []byte, ok bool) {
	t, isText := c.(mcp.TextContent)
	if !isText || t.Annotations != nil {
		return appendMarshaled(dst, c)
	}
	if dst, ok = appendOpenWithMeta(dst, t.Meta); !ok {
		return dst, false
	}
	dst = append(dst, `"type":`...)
	dst = appendJSONString(dst, t.Type)
	dst = append(dst, `,"text":`...)
	dst = appendJSONString(dst, t.Text)
	return append(dst, '}'), true
}

// appendMeta appends a _meta object as mcp.Meta's MarshalJSON writes it:
// the progress token beside the other fields, which win over it.
func appendMeta(dst []byte, m *mcp.Meta) ([]byte, bool) {
	fields := m.AdditionalFields
	if _, shadowed := fields["progressToken"]; m.ProgressToken != nil && !shadowed {
		fields = make(map[string]any, len(m.AdditionalFields)+1)
		for k, v := range m.AdditionalFields {
			fields[k] = v
		}
		fields["progressToken"] = m.ProgressToken
	}
	return appendJSONObject(dst, fields)
}

// appendJSONValue appends v as json.Marshal writes it.
func appendJSONValue(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case string:
		return appendJSONString(dst, v), true
	case float64:
		return appendJSONFloat(dst, v)
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case json.RawMessage:
		// As it is when there is no space to take out and nothing to
		// escape; the encoder's compaction otherwise.
		if bytes.ContainsAny(v, " \t\r\n<>&\u2028\u2029") || !json.Valid(v) {
			return appendMarshaled(dst, v)
		}
		return append(dst, v...), true
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendJSONValue(dst, e); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		return appendJSONObject(dst, v)
	case jsonAppender:
		if out, ok := v.AppendJSON(dst); ok {
			return out, true
		}
	}
	return appendMarshaled(dst, v)
}

// jsonAppender is a value that appends itself as json.Marshal writes it
// (request_more_tools' tools, from JSON kept per tool), or reports false.
type jsonAppender interface {
	AppendJSON(dst []byte) ([]byte, bool)
}

// appendJSONObject appends m, keys sorted, as encoding/json writes a map.
func appendJSONObject(dst []byte, m map[string]any) ([]byte, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var ok bool
		if dst, ok = appendJSONValue(dst, m[k]); !ok {
			return dst, false
		}
	}
	return append(dst, '}'), true
}

// appendMarshaled appends json.Marshal's encoding of v; false when it fails.
func appendMarshaled(dst []byte, v any) ([]byte, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// appendJSONFloat appends f as encoding/json writes a float64; false for
// NaN and the infinities, which it refuses.
func appendJSONFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1] // e-09 is written e-9
		dst = dst[:n-1]
	}
	return dst, true
}

// appendJSONString appends s as encoding/json writes a string, HTML
// characters escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= ' ' && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendOpenWithMeta opens an object and writes its "_meta" member first,
// when meta is set.
func appendOpenWithMeta(dst []byte, meta *mcp.Meta) (_ []byte, ok bool) {
	dst = append(dst, '{')
	if meta == nil {
		return dst, true
	}
	dst = append(dst, `"_meta":`...)
	if dst, ok = appendMeta(dst, meta); !ok {
		return dst, false
	}
	return append(dst, ','), true
}

// fastCallRequest is a tools/call as the fast path decodes it: the
// arguments stay the client's bytes; the last three must be absent.
type fastCallRequest struct {
	JSONRPC string `json:"jsonrpc"`
	Params  struct {
		Name           string          `json:"name"`
		Arguments      json.RawMessage `json:"arguments"`
		Meta           *mcp.Meta       `json:"_meta"`
		Task           json.RawMessage `json:"task"`
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
	} `json:"params"`
}

// fastCall answers a tools/call of a catalog tool without mcp-go: decoded
// once, built as forward builds it, passed through the same pipeline, and
// written by appendCallReply; a stateless request is prepared and its
// result stamped as mcp-go would. ok is false for every call the fast path
// does not serve as mcp-go would (undecodable, refused by mcp-go, a task
// or multi-round-trip request, own tools, unregistered or task-only tools,
// tracing on), which mcp-go then serves. cancelFast cancels the call.
func (c *stdioConn) fastCall(ctx context.Context, m wire.Message, key string) (reply any, ok bool) {
	var req fastCallRequest
	if key == "" || json.Unmarshal(m.Line, &req) != nil || req.JSONRPC != mcp.JSONRPC_VERSION {
		return nil, false
	}
	p := &req.Params
	if p.Task != nil || p.InputResponses != nil || p.RequestState != nil || c.s.hub.opts.Tracing != nil || metatools.IsOwn(p.Name) {
		return nil, false
	}
	modern := mcp.IsModernProtocol(p.Meta.ProtocolVersion())
	if modern {
		if ctx, ok = modernRequest(ctx, p.Meta); !ok {
			return nil, false
		}
	}
	if _, known := c.s.hub.Catalog().Tool(p.Name); !known || !syncCallable(c.s.mcp.GetTool(p.Name)) {
		return nil, false
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.track(key, cancel)
	defer c.track(key, nil)
	var res *mcp.CallToolResult
	if err := c.s.rateLimited(ctx, p.Name); err != nil {
		res = errorResult(err)
	} else {
		cl := callOf(ctx)
		cl.Tool, cl.Meta = p.Name, p.Meta
		if len(p.Arguments) > 0 {
			cl.Args = p.Arguments // as arguments() keeps mcp-go's RawArguments
		}
		res = c.s.callVia(ctx, c.s.mcp, cl)
	}
	if modern {
		res = stampModern(res, c.s.impl)
	}
	return mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(requestIDValue(m.ID())), Result: res}, true
}

// modernRequest is ctx, and its session, as mcp-go's HandleMessage leaves
// them for a request of the stateless era whose _meta is meta; false when
// mcp-go would refuse the request, which it then answers itself.
func modernRequest(ctx context.Context, meta *mcp.Meta) (context.Context, bool) {
	info := &server.RequestProtocolInfo{Modern: true, ProtocolVersion: meta.ProtocolVersion(),
		ClientInfo: meta.ClientInfo(), ClientCapabilities: meta.ClientCapabilities(), LogLevel: meta.LogLevel()}
	if !mcp.IsValidProtocolVersion(info.ProtocolVersion) || info.ClientCapabilities == nil {
		return ctx, false
	}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		if s, ok := sess.(server.SessionWithClientInfo); ok {
			if info.ClientInfo != nil {
				s.SetClientInfo(*info.ClientInfo)
			}
			s.SetClientCapabilities(*info.ClientCapabilities)
		}
		if !sess.Initialized() {
			sess.Initialize()
		}
	}
	return server.WithRequestProtocolInfo(ctx, info), true
}

// stampModern is a copy of res stamped as mcp-go stamps a result of the
// stateless era: a resultType and the server's identity in _meta.
func stampModern(res *mcp.CallToolResult, impl mcp.Implementation) *mcp.CallToolResult {
	r := *res
	if r.ResultType == "" {
		r.ResultType = mcp.ResultTypeComplete
	}
	if r.Meta.ServerInfo() == nil {
		meta := &mcp.Meta{}
		if r.Meta != nil {
			meta.ProgressToken, meta.AdditionalFields = r.Meta.ProgressToken, maps.Clone(r.Meta.AdditionalFields)
		}
		meta.SetServerInfo(impl)
		r.Meta = meta
	}
	return &r
}

// syncCallable reports whether mcp-go would call t's handler for a
// tools/call without a task.
func syncCallable(t *server.ServerTool) bool {
	return t != nil && (t.Tool.Execution == nil || t.Tool.Execution.TaskSupport != mcp.TaskSupportRequired)
}

// requestIDValue is a request id as mcp-go reads it into its reply.
func requestIDValue(raw json.RawMessage) any {
	if n, err := strconv.ParseUint(string(raw), 10, 53); err == nil && raw[0] != '0' {
		return float64(n) // a whole number, as json.Unmarshal reads it
	}
	var id any
	_ = json.Unmarshal(raw, &id) // the pre-check let only valid ids through
	return id
}

// track notes the cancel of the fast-path call under key (nil: it ended).
func (c *stdioConn) track(key string, cancel context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cancel == nil {
		delete(c.fast, key)
		return
	}
	if c.fast == nil {
		c.fast = map[string]context.CancelFunc{}
	}
	c.fast[key] = cancel
}

// cancelFast cancels the fast-path call a notifications/cancelled names, as
// mcp-go cancels the requests it serves; other notifications are left alone.
func (c *stdioConn) cancelFast(m wire.Message) {
	if !m.IsMethod(string(mcp.MethodNotificationCancelled)) {
		return
	}
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(m.Line, &n) != nil || n.Params.RequestID == nil {
		return
	}
	key, ok := idKey(n.Params.RequestID)
	if !ok {
		return
	}
	c.mu.Lock()
	cancel := c.fast[key]
	delete(c.fast, key)
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
