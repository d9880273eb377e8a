package integrity

import (
	"maps"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-router/mcp-router/internal/clip"
)

// ToolNames is a set of tool names to look for in other tools' texts: the
// cross-server shadowing check of [Scan], built once for a whole catalog
// rather than once per tool.
type ToolNames struct{ set shadowNames }

// NewToolNames keeps the names that look like tool names rather than
// English words, as [Scan] does with its others: send_email and sendEmail,
// but not search.
func NewToolNames(names []string) ToolNames { return ToolNames{shadowSet(names, "")} }

// maxMentions bounds what one tool's mentions can put in a warning.
const maxMentions = 8

// Mentions returns the names of n that t's texts mention as whole
// identifiers, as written, each once (ignoring case) and in order of
// appearance, at most eight. The texts are those [Scan] checks for
// shadowing: title, description, annotation title and every string in the
// schemas except identifiers (parameter names, required, $ref, ...).
// Names equal to one of own, ignoring case, are skipped: own are the
// tool's own names (exposed and upstream-own).
func (n ToolNames) Mentions(t mcp.Tool, own ...string) []string {
	if n.set.empty() {
		return nil
	}
	m := &mentioner{names: n.set, own: own, seen: make(map[string]bool)}
	m.text(t.Title)
	m.text(t.Description)
	m.text(t.Annotations.Title)
	m.walk(schemaValue(t.RawInputSchema, mcp.ToolArgumentsSchema(t.InputSchema)), 0)
	m.walk(schemaValue(t.RawOutputSchema, mcp.ToolArgumentsSchema(t.OutputSchema)), 0)
	return m.found
}

type mentioner struct {
	names shadowNames
	own   []string
	seen  map[string]bool // lower-cased
	found []string
}

func (m *mentioner) full() bool { return len(m.found) == maxMentions }

func (m *mentioner) text(s string) {
	if s == "" || m.full() {
		return
	}
	for c := range mentions(stripInvisible(clip.Prefix(s, maxScan)), m.names) {
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

// walk visits the prose strings under v in sorted key order, skipping keys
// (parameter names) and the strings under identifier keywords, as Scan
// does for shadowing.
func (m *mentioner) walk(v any, depth int) {
	if depth > maxDepth || m.full() {
		return
	}
	switch v := v.(type) {
	case string:
		m.text(v)
	case []any:
		for _, e := range v {
			m.walk(e, depth+1)
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if !identifierKeywords[k] {
				m.walk(v[k], depth+1)
			}
		}
	}
}
