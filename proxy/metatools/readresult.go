package metatools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
)

// ReadResultName reads on in a cut result, for models that cannot read resources.
const ReadResultName = "read_result"

// Results reads kept results for their principal only (results.Store).
type Results interface {
	// Read is a page of at most length bytes from offset, cut back to a
	// whole character; total is the result's size.
	Read(principal, uri string, offset, length int) (page string, total int, err error)
}

// readResultArgs are read_result's arguments (its schema's source).
type readResultArgs struct {
	URI    string `json:"uri" jsonschema:"The mcp-router://results/... URI that a cut result named."`
	Offset int    `json:"offset,omitempty" jsonschema:"The byte to start at: 0, or the next_offset of the page before."`
	Length int    `json:"length,omitempty" jsonschema:"At most this many bytes (default and most: the gateway's bound on results)."`
}

var readResultDef = mcp.NewTool(ReadResultName,
	mcp.WithDescription("Read on in a tool result that was cut because it was too long: give the mcp-router://results/... "+
		"URI its note named and the offset it gave; each page says the offset of the next."),
	mcp.WithInputSchema[readResultArgs](),
	mcp.WithTitleAnnotation("Read the rest of a long result"),
	mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
	mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
)

func (t *Tools) readResult(_ context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args readResultArgs
	if err := req.BindArguments(&args); err != nil {
		return mcp.NewToolResultError("read_result: the arguments do not match its input schema: " + err.Error()), nil
	}
	length := t.opts.ResultPage
	if args.Length > 0 && args.Length < length {
		length = args.Length
	}
	page, total, err := t.opts.Results.Read(c.Who(), args.URI, args.Offset, length)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("read_result %s: %v", args.URI, err)), nil
	}
	next := args.Offset + len(page)
	res := mcp.NewToolResultText(page)
	note := fmt.Sprintf("[bytes %d to %d of %d; this is the end]", args.Offset, next, total)
	if next < total {
		note = fmt.Sprintf("[bytes %d to %d of %d; read on with offset %d]", args.Offset, next, total, next)
	}
	res.Content = append(res.Content, mcp.NewTextContent(note))
	res.StructuredContent = map[string]any{"offset": args.Offset, "next_offset": next, "total": total}
	return res, nil
}
