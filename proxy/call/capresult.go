package call

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/internal/readable"
)

// Keeper keeps the whole of a cut result for its principal (results.Store).
type Keeper interface {
	Keep(principal, text string) (uri string, err error)
	// TTL is how long a kept result stays readable.
	TTL() time.Duration
}

// Cap is the stage that keeps a flood out of the model's context: text or
// structured content over limit bytes is cut, with a note on how to read
// on and a resource_link to the whole, which k keeps. A plan step's or an
// in-process caller's result passes whole; limit <= 0 caps nothing.
func Cap(limit int, k Keeper) Stage {
	return func(ctx context.Context, c *Call, next Handler) (*mcp.CallToolResult, error) {
		res, err := next(ctx, c)
		if err != nil || res == nil || limit <= 0 || c.Whole || c.Plan != "" {
			return res, err
		}
		return CapResult(c, limit, k, res), nil
	}
}

// CapResult cuts res as Cap does, for what reaches the model another way (a plan's answer).
func CapResult(c *Call, limit int, k Keeper, res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || limit <= 0 {
		return res
	}
	structured := structuredSize(res) > limit
	if textSize(res.Content) <= limit && !structured && !slices.ContainsFunc(res.Content, bulky(limit)) {
		return res // the common case: counted, nothing copied
	}
	text := joinedText(res.Content)
	out := *res
	out.Content = nil
	if len(text) > limit {
		out.Content = append(out.Content, cutText(c, limit, k, text)...)
	}
	for _, ct := range res.Content {
		_, isText := ct.(mcp.TextContent)
		switch {
		case bulky(limit)(ct):
			r := ct.(mcp.EmbeddedResource).Resource.(mcp.TextResourceContents)
			out.Content = append(out.Content, kept(c, k, "embedded resource "+r.URI, cmp.Or(r.MIMEType, "text/plain"), r.Text, 0)...)
		case !isText || len(text) <= limit:
			out.Content = append(out.Content, ct)
		}
	}
	if structured {
		out.StructuredContent, out.RawStructuredContent = nil, nil
		whole := []byte(res.RawStructuredContent) // the upstream's bytes, as they came
		if len(whole) == 0 {
			whole, _ = json.Marshal(res.StructuredContent)
		}
		out.Content = append(out.Content, kept(c, k, "structured content", "application/json", string(whole), 0)...)
		out.Content = append(out.Content, mcp.NewTextContent(withheldNote))
		out.IsError = true // a client that checks the tool's output schema accepts no other result without it
	}
	return &out
}

// withheldNote says why a result without its structured content is an
// error: the MCP TypeScript SDK's client throws on a result of a tool with
// an output schema that has neither structured content nor isError.
const withheldNote = "[marked as an error only because its structured content is kept, not shown: the call itself succeeded]"

// Withheld reports whether res is isError only because Cap withheld its structured content.
func Withheld(res *mcp.CallToolResult) bool {
	if res == nil || !res.IsError || len(res.Content) == 0 {
		return false
	}
	t, ok := res.Content[len(res.Content)-1].(mcp.TextContent)
	return ok && t.Text == withheldNote
}

// joinedText is the text items of content, joined by newlines.
func joinedText(content []mcp.Content) string {
	var parts []string
	for _, ct := range content {
		if t, ok := ct.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// cutText is the start of a too long text, then the note and the link.
func cutText(c *Call, limit int, k Keeper, text string) []mcp.Content {
	n := CutAt(text, limit)
	return append([]mcp.Content{mcp.NewTextContent(text[:n])}, kept(c, k, "result", "text/plain", text, n)...)
}

// CutAt is where text cut to at most limit bytes ends: after the last
// newline in the limit's second half, or else at a UTF-8 boundary.
func CutAt(text string, limit int) int {
	if len(text) <= limit {
		return len(text)
	}
	if i := strings.LastIndexByte(text[:limit], '\n'); i >= limit/2 {
		return i + 1
	}
	return len(clip.Prefix(text, limit))
}

// kept keeps whole for c's principal and tells the model where to read on.
func kept(c *Call, k Keeper, what, mime, whole string, shown int) []mcp.Content {
	uri, err := k.Keep(c.Who(), whole)
	if err != nil {
		return []mcp.Content{mcp.NewTextContent(fmt.Sprintf(
			"[%s cut: %d bytes, of which %d shown above; the whole could not be kept: %v]", what, len(whole), shown, err))}
	}
	note := fmt.Sprintf("[%s cut: %d bytes, of which %d shown above. The whole is kept for %s at %s: "+
		"read on with resources/read of %s?offset=%d, or the read_result tool with {\"uri\": %q, \"offset\": %d}]",
		what, len(whole), shown, readable.Duration(k.TTL()), uri, uri, shown, uri, shown)
	link := mcp.NewResourceLink(uri, "whole "+what, fmt.Sprintf("The whole %s of %s, %d bytes", what, c.Tool, len(whole)), mime)
	return []mcp.Content{mcp.NewTextContent(note), link}
}

// bulky reports whether an item is an embedded resource with text over
// limit (images, audio and blobs are not measured in bytes).
func bulky(limit int) func(mcp.Content) bool {
	return func(ct mcp.Content) bool {
		er, ok := ct.(mcp.EmbeddedResource)
		if !ok {
			return false
		}
		r, ok := er.Resource.(mcp.TextResourceContents)
		return ok && len(r.Text) > limit
	}
}

// textSize is how many bytes the text items of content take, joined.
func textSize(content []mcp.Content) int {
	n, items := 0, 0
	for _, ct := range content {
		if t, ok := ct.(mcp.TextContent); ok {
			n, items = n+len(t.Text), items+1
		}
	}
	return n + max(0, items-1)
}

func structuredSize(res *mcp.CallToolResult) int {
	switch {
	case len(res.RawStructuredContent) > 0:
		return len(res.RawStructuredContent)
	case res.StructuredContent == nil:
		return 0
	}
	if n := valueSize(res.StructuredContent); n != uncounted {
		return n
	}
	return jsonSize(res.StructuredContent)
}
