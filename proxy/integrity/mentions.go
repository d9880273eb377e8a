package integrity

import (
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-router/mcp-router/internal/clip"
)

// ToolNames is a set of tool names to look for in other tools' texts:
// [Scan]'s shadowing check, built once for a whole catalog.
type ToolNames struct{ set shadowNames }

// NewToolNames keeps the names that look like tool names rather than
// English words, as [Scan] does.
func NewToolNames(names []string) ToolNames { return ToolNames{shadowSet(names, "")} }

// maxMentions bounds what one tool's mentions can put in a warning.
const maxMentions = 8

// MentionsIn returns the names of n that a tool's [Contract] Identifiers
// mention, as written, each once (ignoring case), in order, at most
// eight; names equal to one of own (the tool's own names) are skipped.
func (n ToolNames) MentionsIn(identifiers string, own ...string) []string {
	if n.set.empty() {
		return nil
	}
	m := &mentioner{names: n.set, own: own, seen: make(map[string]bool)}
	m.text(identifiers)
	return m.found
}

// identifiersOf is the Identifiers of t with its schemas in and out.
func identifiersOf(t mcp.Tool, in, out any) string {
	var ids strings.Builder
	add := func(s string) {
		if s == "" {
			return
		}
		for run := range strings.FieldsFuncSeq(stripInvisible(clip.Prefix(s, maxScan)), notIdentifier) {
			if strings.ContainsFunc(run, separator) || identifierLike(run) {
				if ids.Len() > 0 {
					ids.WriteByte(' ')
				}
				ids.WriteString(run)
			}
		}
	}
	add(t.Title)
	add(t.Description)
	add(t.Annotations.Title)
	walkProse(in, 0, add)
	walkProse(out, 0, add)
	return ids.String()
}

type mentioner struct {
	names shadowNames
	own   []string
	seen  map[string]bool // lower-cased
	found []string
}

func (m *mentioner) full() bool { return len(m.found) == maxMentions }

// text records the names of m.names that s mentions.
func (m *mentioner) text(s string) {
	for c := range mentions(s, m.names) {
		key := strings.ToLower(c)
		if m.seen[key] || slices.ContainsFunc(m.own, func(o string) bool { return strings.EqualFold(o, c) }) {
			continue
		}
		m.seen[key] = true
		m.found = append(m.found, c)
		if m.full() {
			return
		}
	}
}

// walkProse visits the prose strings under v as Scan reads them.
func walkProse(v any, depth int, visit func(string)) {
	if depth > maxDepth {
		return
	}
	switch v := v.(type) {
	case string:
		visit(v)
	case []any:
		for _, e := range v {
			walkProse(e, depth+1, visit)
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if !identifierKeywords[k] {
				walkProse(v[k], depth+1, visit)
			}
		}
	}
}
