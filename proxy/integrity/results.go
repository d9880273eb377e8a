package integrity

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-router/mcp-router/internal/clip"
)

// ResultPolicy says what the hub does with a tool result in which
// [ScanResult] finds secrets or injection markers.
type ResultPolicy string

const (
	// ResultsOff skips the scan.
	ResultsOff ResultPolicy = "off"
	// ResultsWarn logs the findings and passes the result on, with a
	// caution appended when it holds injection markers.
	ResultsWarn ResultPolicy = "warn"
	// ResultsRedact, the default, also applies [RedactResult].
	ResultsRedact ResultPolicy = "redact"
	// ResultsBlock fails the call with an error naming the kinds found.
	ResultsBlock ResultPolicy = "block"
)

// ParseResultPolicy reads a result policy from configuration.
func ParseResultPolicy(s string) (ResultPolicy, error) {
	switch p := ResultPolicy(s); p {
	case "":
		return ResultsRedact, nil
	case ResultsOff, ResultsWarn, ResultsRedact, ResultsBlock:
		return p, nil
	}
	return "", fmt.Errorf("unknown result policy %q (want off, warn, redact or block)", s)
}

// ResultFinding is a secret or an injection marker in a tool result: what
// and where, never the text that matched.
type ResultFinding struct {
	// Location is where in the result: content[2].text,
	// structuredContent.items[3].token.
	Location string
	// Kind is a secret kind, KindHiddenInstruction or KindInvisibleChars.
	Kind string
}

// Secret reports whether f is a credential rather than an injection marker.
func (f ResultFinding) Secret() bool { return secretKinds[f.Kind] }

// maxResultFindings bounds what one result can put in the log.
const maxResultFindings = 64

// ScanResult looks for secrets and injection markers in every text of res
// that a model may read: text content, embedded resources' text, resource
// links' name, title and description, and every string value of
// structuredContent. Keys and blobs are not scanned. Injection markers are
// [Scan]'s hidden instructions but the two ordinary in documents, and
// invisible characters but the joiners scripts and emoji need. The work is
// linear in the size of res, which is not modified. It reports each kind
// at most once per location, at most 64 findings, sorted by location and
// kind; nil means clean.
func ScanResult(res *mcp.CallToolResult) []ResultFinding {
	if res == nil {
		return nil
	}
	rs := &resultScan{}
	w := newWalker(rs.text)
	w.content(res.Content)
	if tree := scanTree(res); tree != nil {
		w.path = append(w.path[:0], seg{key: "structuredContent", index: -1})
		w.value(tree, 0)
	}
	slices.SortFunc(rs.findings, func(a, b ResultFinding) int {
		return cmp.Or(strings.Compare(a.Location, b.Location), strings.Compare(a.Kind, b.Kind))
	})
	return rs.findings
}

// RedactResult returns res with every secret replaced by [Redacted] of
// its kind and every invisible character removed, in the texts
// [ScanResult] reads; the copy shares what did not change, and
// structuredContent from the wire keeps its numbers' digits.
func RedactResult(res *mcp.CallToolResult) *mcp.CallToolResult {
	return rewriteResult(res, func(_ *walker, s string) (string, bool) { return redactText(s) })
}

// RewriteResult returns res with fn applied to every text [ScanResult]
// reads, as RedactResult does; res itself when fn changes nothing.
func RewriteResult(res *mcp.CallToolResult, fn func(string) string) *mcp.CallToolResult {
	changed := false
	out := rewriteResult(res, func(_ *walker, s string) (string, bool) {
		t := fn(s)
		changed = changed || t != s
		return t, t != s
	})
	if !changed {
		return res
	}
	return out
}

func rewriteResult(res *mcp.CallToolResult, visit func(*walker, string) (string, bool)) *mcp.CallToolResult {
	out := *res
	w := newWalker(visit)
	if content, changed := w.content(res.Content); changed {
		out.Content = content
	}
	w.path = append(w.path[:0], seg{key: "structuredContent", index: -1})
	if len(res.RawStructuredContent) > 0 && res.StructuredContent != nil {
		// Both trees hold the same strings, so the decoded one says whether
		// the raw JSON needs decoding to be rewritten.
		if _, changed := w.value(res.StructuredContent, 0); !changed {
			return &out
		}
	}
	tree, fromRaw := redactTree(res)
	if tree == nil {
		return &out
	}
	v, changed := w.value(tree, 0)
	if !changed {
		return &out
	}
	out.StructuredContent = v
	out.RawStructuredContent = nil
	if fromRaw {
		out.RawStructuredContent, _ = marshalJSON(v) // nil when it cannot
	}
	return &out
}

// redactText strips invisible characters from s and redacts its secrets;
// joiners stay unless one hides a secret the scan would find.
func redactText(s string) (string, bool) {
	if !containsInvisible(s, invisible) {
		return redactSecrets(s)
	}
	out, _ := redactSecrets(strip(s, resultInvisible))
	if all := stripInvisible(out); all != out && hasSecret(all) {
		out, _ = redactSecrets(all)
	}
	return out, out != s
}

func hasSecret(s string) bool {
	found := false
	eachSecret(s, func(string, int, int) bool { found = true; return false })
	return found
}

type resultScan struct{ findings []ResultFinding }

func (rs *resultScan) full() bool { return len(rs.findings) >= maxResultFindings }

func (rs *resultScan) add(loc, kind string) {
	f := ResultFinding{Location: loc, Kind: kind}
	if !rs.full() && !slices.Contains(rs.findings, f) {
		rs.findings = append(rs.findings, f)
	}
}

// text scans one string of the result.
func (rs *resultScan) text(w *walker, s string) (string, bool) {
	if s == "" || rs.full() {
		return s, false
	}
	where := ""
	loc := func() string {
		if where == "" {
			where = w.location()
		}
		return where
	}
	clean := s
	if containsInvisible(s, invisible) {
		if containsInvisible(s, resultInvisible) {
			rs.add(loc(), KindInvisibleChars)
		}
		if tags := invisibles(s).tags; tags != "" && resultMarker().in(phrase(tags)) {
			rs.add(loc(), KindHiddenInstruction)
		}
		clean = stripInvisible(s)
	}
	eachSecret(clean, func(kind string, _, _ int) bool {
		rs.add(loc(), kind)
		return !rs.full()
	})
	if resultMarker().in(phrase(clean)) {
		rs.add(loc(), KindHiddenInstruction)
	}
	return s, false
}

// resultInvisible is invisible without the zero-width non-joiner and
// joiner, which Persian and Indic scripts and emoji need.
func resultInvisible(r rune) bool { return invisible(r) && r != 0x200C && r != 0x200D }

// containsInvisible reports whether s holds a character pred (a narrowing
// of invisible) accepts, but a leading byte-order mark. Every invisible
// character starts with byte E2, EF or F3, so this is three byte searches.
func containsInvisible(s string, pred func(rune) bool) bool {
	for _, lead := range []byte{0xE2, 0xEF, 0xF3} {
		for i := 0; i < len(s); {
			j := strings.IndexByte(s[i:], lead)
			if j < 0 {
				break
			}
			i += j
			r, n := utf8.DecodeRuneInString(s[i:])
			if pred(r) && (i > 0 || r != 0xFEFF) {
				return true
			}
			i += n
		}
	}
	return false
}

// strip removes the characters pred accepts.
func strip(s string, pred func(rune) bool) string {
	return strings.Map(func(r rune) rune {
		if pred(r) {
			return -1
		}
		return r
	}, s)
}

// walker visits every text of a result that a model may read, copying on
// write what holds a text visit changes.
type walker struct {
	visit func(w *walker, s string) (string, bool)
	path  []seg // where the walk is, for location
	buf   [4]seg
}

func newWalker(visit func(w *walker, s string) (string, bool)) *walker {
	w := &walker{visit: visit}
	w.path = w.buf[:0]
	return w
}

// seg is one step of a location: a key, or an index when index >= 0.
type seg struct {
	key   string
	index int
}

func (w *walker) push(key string, index int) { w.path = append(w.path, seg{key, index}) }
func (w *walker) pop()                       { w.path = w.path[:len(w.path)-1] }

// maxKeyInLocation bounds the bytes of a key a location repeats.
const maxKeyInLocation = 64

// location renders the path: structuredContent.items[3]["odd key"].
func (w *walker) location() string {
	var b strings.Builder
	for i, s := range w.path {
		switch {
		case s.index >= 0:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case i == 0:
			b.WriteString(s.key)
		default:
			b.Write(appendSegment(nil, clip.Ellipsis(s.key, maxKeyInLocation)))
		}
	}
	return b.String()
}

func (w *walker) at(s string, keys ...string) (string, bool) {
	for _, k := range keys {
		w.push(k, -1)
	}
	out, changed := w.visit(w, s)
	w.path = w.path[:len(w.path)-len(keys)]
	return out, changed
}

// content walks the content items; the slice is copied when one changes.
func (w *walker) content(items []mcp.Content) ([]mcp.Content, bool) {
	var out []mcp.Content
	for i, c := range items {
		w.path = append(w.path[:0], seg{key: "content", index: -1}, seg{index: i})
		nc, changed := w.item(c)
		if changed {
			if out == nil {
				out = slices.Clone(items)
			}
			out[i] = nc
		}
	}
	if out == nil {
		return items, false
	}
	return out, true
}

func (w *walker) item(c mcp.Content) (mcp.Content, bool) {
	// An unchanged item is handed back as it came, without boxing a copy.
	switch v := c.(type) {
	case mcp.TextContent:
		if t, ch := w.at(v.Text, "text"); ch {
			v.Text = t
			return v, true
		}
	case *mcp.TextContent:
		if n, ch := w.item(*v); ch {
			t := n.(mcp.TextContent)
			return &t, true
		}
	case mcp.EmbeddedResource:
		if r, ch := w.resource(v.Resource); ch {
			v.Resource = r
			return v, true
		}
	case *mcp.EmbeddedResource:
		if n, ch := w.item(*v); ch {
			e := n.(mcp.EmbeddedResource)
			return &e, true
		}
	case mcp.ResourceLink:
		name, ch1 := w.at(v.Name, "name")
		title, ch2 := w.at(v.Title, "title")
		desc, ch3 := w.at(v.Description, "description")
		if ch1 || ch2 || ch3 {
			v.Name, v.Title, v.Description = name, title, desc
			return v, true
		}
	case *mcp.ResourceLink:
		if n, ch := w.item(*v); ch {
			l := n.(mcp.ResourceLink)
			return &l, true
		}
	}
	return c, false
}

// resource walks an embedded resource's text; blobs are skipped.
func (w *walker) resource(r mcp.ResourceContents) (mcp.ResourceContents, bool) {
	switch r := r.(type) {
	case mcp.TextResourceContents:
		t, ch := w.at(r.Text, "resource", "text")
		r.Text = t
		return r, ch
	case *mcp.TextResourceContents:
		t, ch := w.at(r.Text, "resource", "text")
		if ch {
			v := *r
			v.Text = t
			return &v, true
		}
	}
	return r, false
}

// maxValueDepth stops a walk through a structure that refers to itself.
const maxValueDepth = 10000

// value walks every string of a JSON value, copying maps and slices on
// write; another Go value (a built-in server's struct) is walked as JSON.
func (w *walker) value(v any, depth int) (any, bool) {
	if depth > maxValueDepth {
		return v, false
	}
	switch v := v.(type) {
	case nil, bool, float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return v, false
	case string:
		return w.visit(w, v)
	case []any:
		var out []any
		for i, e := range v {
			w.push("", i)
			ne, ch := w.value(e, depth+1)
			w.pop()
			if ch {
				if out == nil {
					out = slices.Clone(v)
				}
				out[i] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case map[string]any:
		var out map[string]any
		for k, e := range v {
			w.push(k, -1)
			ne, ch := w.value(e, depth+1)
			w.pop()
			if ch {
				if out == nil {
					out = maps.Clone(v)
				}
				out[k] = ne
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	raw, err := json.Marshal(v)
	tree, ok := decodeJSON(raw)
	if err != nil || !ok {
		return v, false
	}
	if out, ch := w.value(tree, depth); ch {
		return out, true
	}
	return v, false
}

// scanTree is the structuredContent to scan.
func scanTree(res *mcp.CallToolResult) any {
	if res.StructuredContent != nil {
		return res.StructuredContent
	}
	tree, _ := decodeJSON(res.RawStructuredContent)
	return tree
}

// redactTree is the structuredContent to redact, from the raw JSON when
// there is some (so no number loses digits), and whether it came from it.
func redactTree(res *mcp.CallToolResult) (any, bool) {
	if len(res.RawStructuredContent) > 0 {
		if tree, ok := decodeJSON(res.RawStructuredContent); ok {
			return tree, true
		}
	}
	return res.StructuredContent, false
}

func decodeJSON(raw []byte) (any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// marshalJSON encodes v without HTML escapes (<IMPORTANT> stays as
// written, and sized as written); nil on error.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// phraseKeeps marks the bytes phrase copies as they are.
var phraseKeeps = class(func(c byte) bool {
	return c < utf8.RuneSelf && !(c >= 'A' && c <= 'Z') && !strings.ContainsRune("_- \t\n\r\v\f", rune(c))
})

// phrase lower-cases s, reads _ and - as spaces, ’ as ', fullwidth forms
// as ASCII, drops soft hyphens and collapses white space, in one pass, so
// markers match however they are spaced or spelled.
func phrase(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf || !phraseKeeps[r] }) {
		return s // nothing to change: most schema words
	}
	b := make([]byte, 0, len(s))
	space := true // at the start, or after a space: drop more
	for i := 0; i < len(s); {
		if j := i; phraseKeeps[s[j]] {
			for j < len(s) && phraseKeeps[s[j]] {
				j++
			}
			b, space, i = append(b, s[i:j]...), false, j
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '_' || c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				if !space {
					b = append(b, ' ')
					space = true
				}
			case c >= 'A' && c <= 'Z':
				b, space = append(b, c+'a'-'A'), false
			default:
				b, space = append(b, c), false
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r >= '\uff01' && r <= '\uff5e' { // fullwidth ASCII, which a model reads as ASCII
			r -= '\uff01' - '!'
		}
		switch {
		case r == '\u00ad': // a soft hyphen, which no reader sees
		case unicode.IsSpace(r) || r == '_' || r == '-':
			if !space {
				b = append(b, ' ')
				space = true
			}
		case r == '\u2019':
			b, space = append(b, '\''), false
		default:
			b, space = utf8.AppendRune(b, unicode.ToLower(r)), false
		}
	}
	if space && len(b) > 0 {
		b = b[:len(b)-1]
	}
	return string(b)
}
