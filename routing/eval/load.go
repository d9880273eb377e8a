package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcp-router/mcp-router/routing"
)

// Query is one benchmark request and the tools that answer it.
type Query struct {
	ID    string   `json:"id"`
	Query string   `json:"query"`
	Gold  []string `json:"gold"`
	// GoldGroups, when present, replaces Gold for scoring: each group is a
	// set of interchangeable tools, and one of each group is enough.
	GoldGroups [][]string `json:"gold_groups,omitempty"`
	Kind       string     `json:"kind"` // "single" or "multi"
	// Level is the set's difficulty level, if any (etom: 1 to 4, and 5 for
	// requests no tool serves).
	Level Level `json:"level,omitempty"`
}

// Level is a query's difficulty level: a JSON number, or a string that
// holds one; any other string (a set's own label) reads as 0.
type Level int

// UnmarshalJSON reads a number or a string.
func (l *Level) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*l = Level(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("level: %w", err)
	}
	n, _ = strconv.Atoi(s)
	*l = Level(n)
	return nil
}

// Groups returns GoldGroups when present, else each gold tool as a group.
func (q Query) Groups() [][]string {
	if len(q.GoldGroups) > 0 {
		return q.GoldGroups
	}
	groups := make([][]string, len(q.Gold))
	for i, g := range q.Gold {
		groups[i] = []string{g}
	}
	return groups
}

// toolLine is one line of tools.jsonl; unknown keys are ignored.
type toolLine struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Server      string          `json:"server"`
}

// LoadTools reads tools.jsonl; a tool's server is its upstream and domain.
func LoadTools(r io.Reader) ([]routing.Tool, error) {
	lines, err := loadJSONL(r, func(t toolLine) bool { return t.Name != "" }, "tool has no name")
	tools := make([]routing.Tool, len(lines))
	for i, t := range lines {
		tools[i] = routing.Tool{Name: t.Name, Upstream: t.Server, Domain: t.Server, Description: t.Description, InputSchema: t.InputSchema}
		if own, ok := strings.CutPrefix(t.Name, t.Server+"__"); ok && t.Server != "" {
			tools[i].Original = own // as the gateway holds a prefixed tool: its upstream's own name beside it
		}
	}
	return tools, err
}

// LoadQueries reads queries.jsonl.
func LoadQueries(r io.Reader) ([]Query, error) {
	return loadJSONL(r, func(q Query) bool { return q.ID != "" }, "query has no id")
}

// loadJSONL reads a T from every non-blank line of r; a line that is not
// JSON, or fails ok (missing says why), stops the read with its number.
func loadJSONL[T any](r io.Reader, ok func(T) bool, missing string) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var x T
		if err := json.Unmarshal(line, &x); err != nil {
			return out, fmt.Errorf("line %d: %w", n, err)
		}
		if !ok(x) {
			return out, fmt.Errorf("line %d: %s", n, missing)
		}
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("line %d: %w", n+1, err)
	}
	return out, nil
}
