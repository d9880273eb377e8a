package metatools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// feedbackArgs are routing_feedback's arguments (its schema's source).
type feedbackArgs struct {
	Query     string `json:"query" jsonschema:"The request as it was routed, in words."`
	WrongTool string `json:"wrong_tool,omitempty" jsonschema:"Exact name of a tool that was wrong for it."`
	RightTool string `json:"right_tool,omitempty" jsonschema:"Exact name of the tool that was right for it."`
	Note      string `json:"note,omitempty" jsonschema:"Why, in a few words."`
}

// feedbackDef lets the model (or the user through it) correct routing.
var feedbackDef = mcp.NewTool(FeedbackName,
	mcp.WithDescription("Teach the gateway's tool routing from a mistake, for good: for requests like \"query\", "+
		"\"wrong_tool\" is not the tool to use and/or \"right_tool\" is. Use it when the user corrects a tool choice "+
		"(\"no, I meant the system logs\") or when a search needed several tries. Later similar requests rank accordingly."),
	mcp.WithInputSchema[feedbackArgs](),
	mcp.WithTitleAnnotation("Correct tool routing"),
	mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(false),
	mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
)

func (t *Tools) routingFeedback(ctx context.Context, c *call.Call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args feedbackArgs
	if err := req.BindArguments(&args); err != nil {
		return mcp.NewToolResultError("routing_feedback: the arguments do not match its input schema: " + err.Error()), nil
	}
	query, note := args.Query, args.Note
	if res := cmp.Or(tooLong(FeedbackName, "query", query, t.opts.Inputs.MaxQueryBytes),
		tooLong(FeedbackName, "note", note, t.opts.Inputs.MaxNoteBytes)); res != nil {
		return res, nil
	}
	query = strings.TrimSpace(query)
	wrong, right := args.WrongTool, args.RightTool
	if query == "" || (wrong == "" && right == "") {
		return mcp.NewToolResultError(`routing_feedback needs "query" and at least one of "wrong_tool" or "right_tool"`), nil
	}
	if err := t.await(ctx, nonEmpty(wrong, right)); err != nil {
		t.NoteOutage(c)
		return t.opts.ErrorResult(fmt.Errorf("routing_feedback: %w", err)), nil // a tool of an upstream still starting, or down
	}
	var learned []lessons.Lesson
	for _, l := range []struct {
		tool string
		pol  lessons.Polarity
	}{{wrong, lessons.Avoid}, {right, lessons.Use}} {
		if l.tool == "" {
			continue
		}
		if _, ok := t.opts.Catalog.Tool(l.tool); !ok {
			return mcp.NewToolResultError(fmt.Sprintf("routing_feedback: %q is not a catalog tool", l.tool)), nil
		}
		lesson, err := t.opts.Lessons.Learn(ctx, lessons.Lesson{Query: query, Tool: l.tool, Polarity: l.pol,
			Source: lessons.SourceFeedback, Note: note, Principal: c.Who()})
		if err != nil {
			return mcp.NewToolResultError("routing_feedback: " + err.Error()), nil
		}
		learned = append(learned, lesson)
	}
	var b strings.Builder
	for _, l := range learned {
		fmt.Fprintf(&b, "Learned lesson %d: for requests like %q, %s %s.\n", l.ID, l.Query, l.Polarity, l.Tool)
	}
	res := mcp.NewToolResultText(strings.TrimSpace(b.String()))
	res.StructuredContent = map[string]any{"lessons": learned}
	return res, nil
}

func nonEmpty(names ...string) []string {
	return slices.DeleteFunc(names, func(n string) bool { return n == "" })
}

// await waits for the upstreams of the named tools still starting, and
// returns why tools are still missing.
func (t *Tools) await(ctx context.Context, names []string) error {
	var errs []error
	for _, m := range t.opts.Starts.Await(ctx, names) {
		errs = append(errs, m.Err)
	}
	return errors.Join(errs...)
}
