package call

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// uncounted is the size the counters below give what they do not count.
const uncounted = -1

// resultSize is jsonSize(res) counted from the result's fields: mcp-go
// encodes a result through maps built for the purpose, which would cost an
// audited call as much as its reply. It gives uncounted for what it does
// not know (other content, annotations, other value types).
func resultSize(res *mcp.CallToolResult) int {
	if len(res.InputRequests) > 0 {
		return uncounted
	}
	var o objectSize
	if res.Meta != nil {
		o.field("_meta", metaSize(res.Meta))
	}
	if res.ResultType != "" {
		o.field("resultType", stringSize(string(res.ResultType)))
	}
	o.field("content", contentSize(res.Content))
	switch {
	case len(res.RawStructuredContent) > 0:
		o.field("structuredContent", rawSize(res.RawStructuredContent))
	case res.StructuredContent != nil:
		o.field("structuredContent", valueSize(res.StructuredContent))
	}
	if res.IsError {
		o.field("isError", len("true"))
	}
	if res.RequestState != "" {
		o.field("requestState", stringSize(res.RequestState))
	}
	return o.size()
}

// objectSize adds up a JSON object's size field by field.
type objectSize struct {
	n, fields int
	uncounted bool // a field's value was uncounted
}

func (o *objectSize) field(key string, n int) {
	if n == uncounted {
		o.uncounted = true
	}
	o.n += stringSize(key) + len(":") + n
	o.fields++
}

// size is the object's size with commas and braces; uncounted if a field was.
func (o *objectSize) size() int {
	if o.uncounted {
		return uncounted
	}
	return o.n + max(o.fields-1, 0) + len("{}")
}

// contentSize is the size of a content array of plain text items.
func contentSize(items []mcp.Content) int {
	n := len("[]") + max(len(items)-1, 0)
	for _, c := range items {
		t, ok := c.(mcp.TextContent)
		if !ok || t.Annotations != nil {
			return uncounted
		}
		var o objectSize
		if t.Meta != nil {
			o.field("_meta", metaSize(t.Meta))
		}
		o.field("type", stringSize(t.Type))
		o.field("text", stringSize(t.Text))
		m := o.size()
		if m == uncounted {
			return uncounted
		}
		n += m
	}
	return n
}

// metaSize is the size of a _meta object (its other fields win over the
// progress token, as in mcp-go).
func metaSize(m *mcp.Meta) int {
	var o objectSize
	if _, shadowed := m.AdditionalFields["progressToken"]; m.ProgressToken != nil && !shadowed {
		o.field("progressToken", valueSize(m.ProgressToken))
	}
	for k, v := range m.AdditionalFields {
		o.field(k, valueSize(v))
	}
	return o.size()
}

// valueSize is the size of v as json.Marshal writes it, for the values
// encoding/json decodes into an any; uncounted otherwise.
func valueSize(v any) int {
	switch v := v.(type) {
	case nil:
		return len("null")
	case bool:
		if v {
			return len("true")
		}
		return len("false")
	case string:
		return stringSize(v)
	case float64:
		return floatSize(v)
	case int:
		return intSize(int64(v))
	case int64:
		return intSize(v)
	case json.RawMessage:
		return rawSize(v)
	case []any:
		n := len("[]") + max(len(v)-1, 0)
		for _, e := range v {
			m := valueSize(e)
			if m == uncounted {
				return uncounted
			}
			n += m
		}
		return n
	case map[string]any:
		var o objectSize
		for k, e := range v {
			o.field(k, valueSize(e))
		}
		return o.size()
	}
	return uncounted
}

// rawSize is len(raw) when json.Marshal would write raw unchanged.
func rawSize(raw json.RawMessage) int {
	if len(raw) == 0 || bytes.ContainsAny(raw, " \t\r\n<>&\u2028\u2029") || !json.Valid(raw) {
		return uncounted
	}
	return len(raw)
}

func intSize(i int64) int {
	var buf [20]byte
	return len(strconv.AppendInt(buf[:0], i, 10))
}

// floatSize is the size of f as encoding/json writes a float64
// ('e' notation outside [1e-6, 1e21), exponent unpadded).
func floatSize(f float64) int {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return uncounted
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		return n - 1 // e-09 is written e-9
	}
	return len(b)
}

// stringSize is the size of s as encoding/json writes it, HTML escaped.
func stringSize(s string) int {
	n := len(`""`)
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b >= ' ' && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&':
				n++
			case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += len(`\n`)
			default:
				n += len(`\u0000`)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += len(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			n += len(`\u2028`)
		default:
			n += size
		}
		i += size
	}
	return n
}
