package approval

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// MaxSummaryBytes bounds the summary of a call's arguments.
const MaxSummaryBytes = 600

// MaxValueBytes bounds one string in a summary, so that a padded value
// cannot push the keys after it out of sight.
const MaxValueBytes = 120

// Summary is args as the person reads them: JSON with credentials (by key
// or shape, in URLs, after Bearer) redacted, each string cut to
// MaxValueBytes, invisible characters escaped, the whole cut to
// MaxSummaryBytes. When the keys would not all show, strings are cut
// shorter, then lists and objects below the top are stood in for by their
// size.
func Summary(args any) string {
	return summary(args, MaxSummaryBytes)
}

// minValueBytes is the shortest cut of a string before nested values are
// stood in for by their size.
const minValueBytes = 16

func summary(args any, n int) string {
	if raw, ok := args.(json.RawMessage); ok {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			args = v
		}
	}
	for room := MaxValueBytes; ; room /= 2 {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // $<<step>> references read as written
		if err := enc.Encode(redact("", args, room, 0)); err != nil {
			return "(arguments not readable)"
		}
		s := visible(integrity.RedactSecrets(strings.TrimSuffix(b.String(), "\n")))
		switch {
		case len(s) <= n && room < MaxValueBytes:
			return s + clip.Mark // cut shorter to fit, and marked as a cut summary is
		case len(s) <= n:
			return s
		case room < minValueBytes:
			return clip.Prefix(s, n) + clip.Mark
		}
	}
}

// redact is v with secret-looking strings replaced and strings (keys
// too) cut to room bytes; with room under minValueBytes, lists and objects below the
// top are stood in for by their size.
func redact(key string, v any, room, depth int) any {
	flat := room < minValueBytes && depth > 0
	switch v := v.(type) {
	case map[string]any:
		if flat {
			return fmt.Sprintf("{…%d keys}", len(v))
		}
		return redactMap(v, room, depth)
	case []any:
		if flat {
			return fmt.Sprintf("[…%d elements]", len(v))
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redact(key, e, room, depth+1)
		}
		return out
	case string:
		if integrity.SecretReason(key, v) != "" && !strings.Contains(v, "$<<") {
			return "[redacted]"
		}
		v = bearer.ReplaceAllString(urls.ReplaceAllStringFunc(v, redactURL), "$1 [redacted]")
		return cut(v, room)
	}
	return v
}

// redactMap redacts each value of v under its key cut to room; keys that read the same once cut
// are numbered apart, so neither hides the other.
func redactMap(v map[string]any, room, depth int) map[string]any {
	out := make(map[string]any, len(v))
	dups := map[string]int{}
	for _, k := range slices.Sorted(maps.Keys(v)) {
		base := cut(k, room)
		name := base
		for _, dup := out[name]; dup; _, dup = out[name] {
			dups[base]++
			name = fmt.Sprintf("%s'%d", base, dups[base])
		}
		out[name] = redact(k, v[k], room, depth+1)
	}
	return out
}

// cut is s cut to room bytes, saying its size.
func cut(s string, room int) string {
	if len(s) <= room {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes in all)", strings.ToValidUTF8(s[:room], ""), len(s))
}

var (
	urls = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)
	// A credential after Bearer or Basic: long, and not a path.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+=-][A-Za-z0-9._~+/=-]{15,}`)
)

// redactURL is raw with its password and credential-like parameters redacted.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "redacted")
	}
	params := strings.Split(u.RawQuery, "&")
	for i, p := range params {
		k, v, _ := strings.Cut(p, "=")
		key, _ := url.QueryUnescape(k)
		val, _ := url.QueryUnescape(v)
		if integrity.SecretReason(key, val) != "" {
			params[i] = k + "=redacted"
		}
	}
	u.RawQuery = strings.Join(params, "&")
	return u.String()
}

// visible escapes format characters (bidi controls, zero widths, tags) as JSON \u escapes.
func visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !hidden(r) {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.String()
}

func hidden(r rune) bool { return unicode.Is(unicode.Cf, r) }
