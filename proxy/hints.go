package proxy

// What the proxy tells clients that search tools themselves: which tools
// to keep loaded, the words each is found by, and server instructions.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/internal/readable"
)

// Tool _meta keys read by clients that defer tools behind their own search.
const (
	// AlwaysLoadMetaKey set to true asks the client never to defer the tool.
	AlwaysLoadMetaKey = "anthropic/alwaysLoad"
	// SearchHintMetaKey holds words the client's tool search matches the
	// tool by.
	SearchHintMetaKey = "anthropic/searchHint"
)

// Bounds of the texts the proxy writes for client-side search.
const (
	maxSearchHint   = 200  // bytes of one tool's searchHint
	maxAboutServer  = 160  // bytes of a server description quoted in a hint or description
	maxInstructions = 1200 // bytes of the generated instructions
)

const ownSearchHint = "mcp-router gateway: find, describe and call the tools of every server behind it"

// searchHint is the words t is found by: its server, domain and purpose.
func searchHint(t Tool) string {
	h := t.Upstream
	if t.Domain != "" && t.Domain != t.Upstream {
		h += ", " + t.Domain
	}
	if t.Server != "" {
		h += ": " + clip.OneLine(t.Server)
	}
	return clip.Ellipsis(h, maxSearchHint)
}

// withHints returns def with the client-side search hints in a new _meta,
// replacing an upstream's own: what stays loaded is the gateway's choice.
func withHints(def mcp.Tool, hint string, alwaysLoad bool) mcp.Tool {
	fields := map[string]any{}
	var progress mcp.ProgressToken
	if def.Meta != nil {
		maps.Copy(fields, def.Meta.AdditionalFields)
		progress = def.Meta.ProgressToken
	}
	delete(fields, AlwaysLoadMetaKey)
	fields[SearchHintMetaKey] = hint
	if alwaysLoad {
		fields[AlwaysLoadMetaKey] = true
	}
	def.Meta = &mcp.Meta{ProgressToken: progress, AdditionalFields: fields}
	return def
}

// enriched is def with a description that names its server, what the
// server is for, and its domain, for clients that search tools themselves.
func enriched(def mcp.Tool, t Tool) mcp.Tool {
	about := "Server: " + t.Upstream
	if t.Server != "" {
		about += " (" + clip.Ellipsis(clip.OneLine(t.Server), maxAboutServer) + ")"
	}
	if t.Domain != "" && t.Domain != t.Upstream {
		about += ". Domain: " + t.Domain
	}
	if strings.TrimSpace(def.Description) == "" {
		def.Description = about + "."
	} else {
		def.Description = strings.TrimRight(def.Description, " \n") + "\n\n" + about + "."
	}
	return def
}

// allMode reports whether ctx's request lists every tool.
func (s *Server) allMode(ctx context.Context) bool {
	if !s.meta.Routes() {
		return true
	}
	return httpEdgeOf(ctx).all
}

// catalogInstructions returns the server instructions generated from c and
// the pending upstreams: what the gateway holds, what is to come, and when
// to use its own tools, within maxInstructions bytes.
func catalogInstructions(c *Catalog, pending []pendingServer, routed, planner bool) string {
	upstreams := map[string]int{}
	byDomain := map[string][]string{}
	for _, t := range c.Tools {
		if upstreams[t.Upstream] == 0 {
			d := cmp.Or(t.Domain, t.Upstream)
			byDomain[d] = append(byDomain[d], t.Upstream)
		}
		upstreams[t.Upstream]++
	}
	var b strings.Builder
	b.WriteString(headline(len(c.Tools), len(upstreams), pending))
	usage := usageText(routed, planner)
	budget := maxInstructions - b.Len() - len(usage) - len(" Servers by domain: .") - 2
	later := pendingText(pending, budget/2)
	budget -= len(later)
	domains := slices.Sorted(maps.Keys(byDomain))
	var parts []string
	for i, d := range domains {
		ups := byDomain[d]
		slices.Sort(ups)
		part := d + " (" + strings.Join(ups, ", ") + ")"
		if len(ups) == 1 && ups[0] == d { // a server that is its own domain
			part = d
		}
		rest := fmt.Sprintf("; and %d more domains", len(domains)-i)
		if len(strings.Join(append(parts, part), "; "))+len(rest) > budget {
			parts = append(parts, rest[2:])
			break
		}
		parts = append(parts, part)
	}
	if len(parts) > 0 {
		b.WriteString(" Servers by domain: " + strings.Join(parts, "; ") + ".")
	}
	b.WriteString(later)
	b.WriteString("\n" + usage)
	return clip.Ellipsis(b.String(), maxInstructions)
}

// headline says what the gateway serves, and that more is to come while
// servers are pending, so that a cold start never reads as 0 tools. "Yet"
// only while some pending server is starting: failed ones are just not
// connected.
func headline(tools, connected int, pending []pendingServer) string {
	yet := ""
	if anyStarting(pending) {
		yet = " yet"
	}
	switch {
	case len(pending) == 0:
		return fmt.Sprintf("mcp-router is a gateway to %s from %s, named <server>_<tool>.", tally(tools, "tool"), tally(connected, "MCP server"))
	case connected == 0:
		return fmt.Sprintf("mcp-router is a gateway to %s, none connected%s (see below); their tools are named <server>_<tool>.", tally(len(pending), "MCP server"), yet)
	}
	return fmt.Sprintf("mcp-router is a gateway to %s from %s so far, and %d more not connected%s (see below); tools are named <server>_<tool>.",
		tally(tools, "tool"), tally(connected, "MCP server"), len(pending), yet)
}

// tally is "1 tool" or "n tools".
func tally(n int, unit string) string { return readable.Count(int64(n), unit) }

// anyStarting reports whether a pending server is on its first attempt.
func anyStarting(pending []pendingServer) bool {
	return slices.ContainsFunc(pending, func(p pendingServer) bool { return p.State == pendingStarting })
}

// maxAboutPending bounds a pending server's description, in bytes.
const maxAboutPending = 60

// pendingText names the pending servers in at most budget bytes; those
// past it are counted.
func pendingText(pending []pendingServer, budget int) string {
	if len(pending) == 0 {
		return ""
	}
	head, tail := " Not connected (their tools are not listed): ", "."
	if anyStarting(pending) {
		head = " Not connected yet (their tools are not listed; a call waits for a starting server): "
	}
	var parts []string
	for i, p := range pending {
		part := p.Name + " (" + p.State
		if p.About != "" {
			part += ": " + clip.Ellipsis(clip.OneLine(p.About), maxAboutPending)
		}
		part += ")"
		rest := fmt.Sprintf("; and %d more", len(pending)-i)
		if len(head)+len(strings.Join(append(parts, part), "; "))+len(rest)+len(tail) > budget {
			parts = append(parts, rest[2:])
			break
		}
		parts = append(parts, part)
	}
	return head + strings.Join(parts, "; ") + tail
}

// usageText says when to use the proxy's own tools.
func usageText(routed, planner bool) string {
	var b strings.Builder
	if routed {
		b.WriteString("Your tool list shows a small belt. When no listed tool fits, call request_more_tools with the task in words: " +
			"it returns the best tools as short signatures; describe_tools gives their full input schemas. ")
	} else {
		b.WriteString("Every tool is listed; each description names its server. ")
	}
	b.WriteString(`call_tool {"name","arguments"} calls any catalog tool by name, listed or not. ` +
		"run_plan runs several dependent calls in one step. ")
	if planner {
		b.WriteString("plan asks a local model how to handle a request. ")
	}
	b.WriteString("Read routing alerts before calling: a shared keyword is not a shared intent.")
	return b.String()
}
