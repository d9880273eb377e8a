package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// normalize turns any value that encodes as JSON into the plain form
// encoding/json decodes (maps, slices, json.Number, string, bool, nil).
func normalize(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(data)
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// toText is how a value reads inside text: a string as it is, anything else
// as compact JSON (without HTML escaping).
func toText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// lookupPath follows path into v: keys of objects, decimal indices of arrays.
func lookupPath(v any, path []string) (any, error) {
	for i, tok := range path {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, fmt.Errorf("at %s: no key %q%s%s", pathPrefix(path, i), tok, keyList(x), bracketHint(tok))
			}
			v = next
		case []any:
			if !isIndex(tok) {
				return nil, fmt.Errorf("at %s: %q is not an array index", pathPrefix(path, i), tok)
			}
			n, err := strconv.Atoi(tok)
			if err != nil || n >= len(x) {
				return nil, fmt.Errorf("at %s: index %s out of range (array of %d)", pathPrefix(path, i), tok, len(x))
			}
			v = x[n]
		default:
			return nil, fmt.Errorf("at %s: cannot take %q of %s", pathPrefix(path, i), tok, jsonKind(v))
		}
	}
	return v, nil
}

func pathPrefix(path []string, n int) string {
	if n == 0 {
		return "the value"
	}
	return strings.Join(path[:n], ".")
}

// keyList names up to 8 keys an object has, to help whoever wrote the path.
func keyList(m map[string]any) string {
	if len(m) == 0 {
		return " (the object is empty)"
	}
	keys := sortedKeys(m)
	more := ""
	if len(keys) > 8 {
		keys, more = keys[:8], ", …"
	}
	return " (it has " + strings.Join(keys, ", ") + more + ")"
}

// bracketHint helps with the common items[0] for items.0.
func bracketHint(tok string) string {
	if strings.HasSuffix(tok, "]") && strings.Contains(tok, "[") {
		return "; indices are dotted: items.0, not items[0]"
	}
	return ""
}

// isIndex reports whether tok is a decimal array index without a sign or
// leading zero.
func isIndex(tok string) bool {
	return tok == "0" || tok != "" && tok[0] != '0' && strings.Trim(tok, "0123456789") == ""
}

// jsonKind names the JSON type of a value, for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64, int:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

// resultValue is a step's value: its structuredContent, else its text
// parsed as JSON, else its text.
func resultValue(res *mcp.CallToolResult) (any, error) {
	switch {
	case len(res.RawStructuredContent) > 0:
		return decodeJSON(res.RawStructuredContent)
	case res.StructuredContent != nil:
		return normalize(res.StructuredContent)
	}
	text, ok := resultText(res)
	if v, err := decodeJSON([]byte(text)); err == nil {
		return v, nil
	}
	if !ok {
		return nil, nil
	}
	return text, nil
}

// resultText joins the text contents of a result with newlines; ok is
// false when it has none.
func resultText(res *mcp.CallToolResult) (text string, ok bool) {
	var texts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}
