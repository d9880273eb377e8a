package proxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxNameLen is the longest tool name a client accepts (namePattern).
const maxNameLen = 64

// exposedPrefix is the prefix the tool names of the upstream u get (its prompts
// always get Prefix): Prefix, except a
// default prefix ("<name>_") that every one of its tools already starts
// with, which is not added again (slack_post_message rather than
// slack_slack_post_message). A prefix the configuration set is always
// used.
func exposedPrefix(u UpstreamConfig, tools []mcp.Tool) string {
	if !u.DefaultPrefix || u.Prefix == "" || len(tools) == 0 {
		return u.Prefix
	}
	for _, t := range tools {
		if !strings.HasPrefix(t.Name, u.Prefix) {
			return u.Prefix
		}
	}
	return ""
}

// longestName is the length of the longest tool name in tools.
func longestName(tools []mcp.Tool) int {
	n := 0
	for _, t := range tools {
		n = max(n, len(t.Name))
	}
	return n
}

// prefixAdvice says, for an exposed name that does not fit a client's
// limit, which prefix would: the longest that keeps every tool of the
// upstream (whose longest own name is longest) within 64 characters, or
// none. It is "" when the name is invalid for another reason.
func prefixAdvice(cfg UpstreamConfig, own, name string, longest int) string {
	if len(name) <= maxNameLen {
		return ""
	}
	if !namePattern.MatchString(own) {
		return fmt.Sprintf("; the tool's own name is %d characters, so no prefix makes it fit: leave it out with upstreams.%s.tools.deny",
			len(own), cfg.Name)
	}
	fit := maxNameLen - longest
	if fit < 2 || cfg.Prefix == "" {
		return fmt.Sprintf(`; set upstreams.%s.prefix: "" to expose it as %q`, cfg.Name, own)
	}
	short := strings.TrimRight(cfg.Prefix, "_-.")
	short = short[:min(len(short), fit-1)] + "_"
	return fmt.Sprintf(`; the prefix %q is %d characters and the longest tool name of upstream %s is %d: `+
		`a prefix of at most %d characters fits every tool, e.g. upstreams.%s.prefix: %q (or prefix: "")`,
		cfg.Prefix, len(cfg.Prefix), cfg.Name, longest, fit, cfg.Name, short)
}

// appOnly reports a tool its server marks for its app's interface only:
// _meta.ui.visibility (MCP Apps) is an array without "model".
func appOnly(t mcp.Tool) bool {
	if t.Meta == nil {
		return false
	}
	ui, ok := t.Meta.AdditionalFields["ui"].(map[string]any)
	if !ok {
		return false
	}
	switch vis := ui["visibility"].(type) {
	case []any: // decoded from JSON
		return !slices.Contains(vis, any("model"))
	case []string: // an in-process server's own value
		return !slices.Contains(vis, "model")
	}
	return false
}
