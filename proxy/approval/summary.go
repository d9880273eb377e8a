package approval

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// MaxSummaryBytes bounds the summary of one call's arguments that the
// person reads.
const MaxSummaryBytes = 600

// Summary is args as the person reads them: JSON, each string under a
// key named like a credential (or shaped like one) replaced by
// "[redacted]", every secret the result scan knows by its shape redacted,
// cut to MaxSummaryBytes at a UTF-8 boundary.
func Summary(args any) string {
	if raw, ok := args.(json.RawMessage); ok {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			args = v
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // $<<step>> references read as written
	if err := enc.Encode(redact("", args)); err != nil {
		return "(arguments not readable)"
	}
	return clip(integrity.RedactSecrets(strings.TrimSuffix(b.String(), "\n")), MaxSummaryBytes)
}

// redact is v with the strings that look like secrets, by their key or
// their shape, replaced.
func redact(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out[k] = redact(k, v[k])
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redact(key, e)
		}
		return out
	case string:
		if integrity.SecretReason(key, v) != "" && !strings.Contains(v, "$<<") {
			return "[redacted]"
		}
	}
	return v
}

// clip cuts s to at most n bytes at a UTF-8 boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = strings.ToValidUTF8(s[:n], "")
	return s + "…"
}
