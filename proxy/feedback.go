package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/routing/lessons"
)

const feedbackName = "routing_feedback"

// feedbackArgs are routing_feedback's arguments; its input schema is
// derived from them.
type feedbackArgs struct {
	Query     string `json:"query" jsonschema:"The request as it was routed, in words."`
	WrongTool string `json:"wrong_tool,omitempty" jsonschema:"Exact name of a tool that was wrong for it."`
	RightTool string `json:"right_tool,omitempty" jsonschema:"Exact name of the tool that was right for it."`
	Note      string `json:"note,omitempty" jsonschema:"Why, in a few words."`
}

// feedbackDef lets the model (or the user through it) correct routing.
var feedbackDef = mcp.NewTool(feedbackName,
	mcp.WithDescription("Teach the gateway's tool routing from a mistake, for good: for requests like \"query\", "+
		"\"wrong_tool\" is not the tool to use and/or \"right_tool\" is. Use it when the user corrects a tool choice "+
		"(\"no, I meant the system logs\") or when a search needed several tries. Later similar requests rank accordingly."),
	mcp.WithInputSchema[feedbackArgs](),
	mcp.WithTitleAnnotation("Correct tool routing"),
	mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(false),
	mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
)

func (s *Server) routingFeedback(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args feedbackArgs
	if err := req.BindArguments(&args); err != nil {
		return mcp.NewToolResultError("routing_feedback: the arguments do not match its input schema: " + err.Error()), nil
	}
	query, note := args.Query, args.Note
	if res := firstTooLong(tooLong(feedbackName, "query", query, s.inputs.MaxQueryBytes),
		tooLong(feedbackName, "note", note, s.inputs.MaxNoteBytes)); res != nil {
		return res, nil
	}
	query = strings.TrimSpace(query)
	wrong, right := args.WrongTool, args.RightTool
	if query == "" || (wrong == "" && right == "") {
		return mcp.NewToolResultError(`routing_feedback needs "query" and at least one of "wrong_tool" or "right_tool"`), nil
	}
	if err := s.hub.AwaitTools(ctx, nonEmpty(wrong, right)); err != nil {
		s.noteOutage(ctx)
		return errorResult(fmt.Errorf("routing_feedback: %w", err)), nil // a tool of an upstream still starting, or down
	}
	var learned []lessons.Lesson
	for _, l := range []struct {
		tool string
		pol  lessons.Polarity
	}{{wrong, lessons.Avoid}, {right, lessons.Use}} {
		if l.tool == "" {
			continue
		}
		if _, ok := s.hub.Catalog().Tool(l.tool); !ok {
			return mcp.NewToolResultError(fmt.Sprintf("routing_feedback: %q is not a catalog tool", l.tool)), nil
		}
		lesson, err := s.lessons.Learn(ctx, lessons.Lesson{Query: query, Tool: l.tool, Polarity: l.pol,
			Source: lessons.SourceFeedback, Note: note, Principal: principalName(ctx)})
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

// nonEmpty is names without the empty ones.
func nonEmpty(names ...string) []string {
	return slices.DeleteFunc(names, func(n string) bool { return n == "" })
}
