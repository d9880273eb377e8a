package proxy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/internal/editdist"
)

// Bounds of Catalog.Suggest.
const (
	maxSuggestions = 3
	// maxSuggestName is the longest unknown name looked up; a longer one
	// is no tool name and gets no suggestion (edit distance is quadratic).
	maxSuggestName = 2 * maxNameLen
)

// Suggest returns up to three catalog tool names close to name, for a "did
// you mean": first the tools whose own name name is or ends with, across
// prefixes (read_file or files_read_file finds fs_read_file and
// notes_read_file), then the names within a few edits of it, closest
// first.
func (c *Catalog) Suggest(name string) []string {
	if c == nil || name == "" || len(name) > maxSuggestName {
		return nil
	}
	type match struct {
		name        string
		class, dist int
	}
	lower := strings.ToLower(name)
	limit := max(2, len(name)/3)
	var found []match
	for _, t := range c.Tools {
		own := strings.ToLower(t.Original)
		if own == lower || strings.HasSuffix(lower, "_"+own) {
			found = append(found, match{t.Name, 0, editdist.Distance(lower, strings.ToLower(t.Name), maxSuggestName)})
			continue
		}
		if d := editdist.Distance(lower, strings.ToLower(t.Name), limit); d <= limit {
			found = append(found, match{t.Name, 1, d})
		}
	}
	slices.SortFunc(found, func(a, b match) int {
		return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.dist, b.dist), strings.Compare(a.name, b.name))
	})
	out := make([]string, 0, min(len(found), maxSuggestions))
	for _, m := range found[:min(len(found), maxSuggestions)] {
		out = append(out, m.name)
	}
	return out
}

// explainUnknown is what follows "unknown tool" for a name not in the
// catalog: why the model is not offered a tool of that name (its server
// keeps it for its app), or the closest names; "" when there is nothing
// to say.
func (c *Catalog) explainUnknown(name string) string {
	if _, ok := c.appOnlyTool(name); ok {
		return ": " + ErrAppOnly.Error()
	}
	return didYouMean(c.Suggest(name))
}

// didYouMean is the "; did you mean ...?" ending for an unknown name, or "".
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", strings.Join(names, ", "))
}
