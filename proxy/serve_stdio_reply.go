package proxy

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// appendCallReply appends msg and a newline to dst as a json.Encoder
// writes them, byte for byte, when msg is the reply to a tools/call; ok
// is false for any other message. mcp-go encodes a tool result by way of
// maps built for the purpose, which the encoder then reads and compacts:
// for a reply that only passes on what an upstream returned, that is
// most of what writing it costs. What this does not write itself (content
// other than text, typed values) it writes as json.Marshal does, which is
// what an encoder writes for a value inside another.
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

// appendCallResult appends res as mcp.CallToolResult's MarshalJSON
// writes it: the fields it has, in the order of their names.
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
// the progress token beside the other fields (which win over it), in the
// order of their names.
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

// appendJSONValue appends v as json.Marshal writes it, itself for the
// values encoding/json decodes into an any.
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
		// Written as it is when there is no space to take out and nothing
		// to escape; the encoder's compaction otherwise.
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
	}
	return appendMarshaled(dst, v)
}

// appendJSONObject appends m with its keys in order, as encoding/json
// writes a map.
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

// appendMarshaled appends json.Marshal's encoding of v; false when it
// fails.
func appendMarshaled(dst []byte, v any) ([]byte, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, false
	}
	return append(dst, b...), true
}

// appendJSONFloat appends f as encoding/json writes a float64 (see
// floatSize); false for NaN and the infinities, which it refuses.
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

// appendJSONString appends s as a JSON string as encoding/json writes it,
// HTML characters escaped (see stringSize).
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

// appendOpenWithMeta opens an object and, when meta is set, writes its
// "_meta" member first, followed by a comma.
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
