// Package builtin holds the MCP servers built into the mcp-router binary, so that the default
// profile works on a fresh machine with nothing else installed:
//
//	calculator  17 arithmetic tools (add, divide, sqrt, log, factorial, ...)
//	web         fetch_url and extract_links, over HTTP(S) only
//	docs        search_documents, BM25 over the Markdown and text files under --root
//	            (without --root, over mcp-router's own documentation, built in)
//
// The proxy hub runs these servers in-process as upstreams (a profile's `builtin: NAME`), and
// `mcp-router builtin NAME` serves one alone. Every tool reports a failure the model can act on as
// an isError result, never as a protocol error.
package builtin

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

const version = "1.0.0"

var builders = map[string]func(args []string) (*server.MCPServer, error){
	"calculator": newCalculator,
	"docs":       newDocs,
	"web":        newWeb,
}

// Names returns the built-in server names, sorted: ["calculator", "docs", "web"].
func Names() []string {
	return slices.Sorted(maps.Keys(builders))
}

// New builds the named server with its command-line flags, e.g. New("docs", []string{"--root",
// "./docs"}), and does no I/O. An unknown name or a bad flag is an error naming server and flag.
func New(name string, args []string) (*server.MCPServer, error) {
	build, ok := builders[name]
	if !ok {
		return nil, fmt.Errorf("unknown built-in server %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	srv, err := build(args)
	if err != nil {
		return nil, fmt.Errorf("%s server: %w", name, err)
	}
	return srv, nil
}

func newServer(name string) *server.MCPServer {
	return server.NewMCPServer(name, version, server.WithToolCapabilities(false), server.WithRecovery())
}

// parseFlags parses args into fs (made with flag.ContinueOnError); -h returns an error that lists
// the flags, and so does a positional argument.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return errors.New(usage(fs))
	}
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (%s)", fs.Arg(0), usage(fs))
	}
	return nil
}

// usage describes the flags of fs on one line.
func usage(fs *flag.FlagSet) string {
	var parts []string
	fs.VisitAll(func(f *flag.Flag) {
		parts = append(parts, fmt.Sprintf("--%s (default %s): %s", f.Name, f.DefValue, f.Usage))
	})
	if len(parts) == 0 {
		return "it takes no flags"
	}
	return "flags: " + strings.Join(parts, "; ")
}

// errArg reports a missing or malformed tool argument.
func errArg(name, format string, args ...any) error {
	return fmt.Errorf("parameter %q "+format, append([]any{name}, args...)...)
}

// numberArg reads a finite number from args[name]. A numeric string is accepted too, since models
// sometimes quote numbers. A missing argument returns def, or an error when required.
func numberArg(args map[string]any, name string, required bool, def float64) (float64, error) {
	v, ok := args[name]
	if !ok || v == nil {
		if required {
			return 0, errArg(name, "is required")
		}
		return def, nil
	}
	var f float64
	switch v := v.(type) {
	case float64:
		f = v
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case string:
		parsed, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, errArg(name, "must be a number, got the string %q", v)
		}
		f = parsed
	default:
		return 0, errArg(name, "must be a number, got %s", jsonKind(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errArg(name, "must be a finite number")
	}
	return f, nil
}

// intArg reads a whole number in [1, max] from args[name], clamping values above max.
func intArg(args map[string]any, name string, def, max int) (int, error) {
	f, err := numberArg(args, name, false, float64(def))
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, errArg(name, "must be a whole number, got %v", f)
	}
	if f < 1 {
		return 0, errArg(name, "must be at least 1, got %v", f)
	}
	return int(min(f, float64(max))), nil
}

// stringArg reads a non-blank string from args[name].
func stringArg(args map[string]any, name string) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return "", errArg(name, "is required")
	}
	s, ok := v.(string)
	if !ok {
		return "", errArg(name, "must be a string, got %s", jsonKind(v))
	}
	if strings.TrimSpace(s) == "" {
		return "", errArg(name, "must not be empty")
	}
	return s, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float64, int, int64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// readOnly adds the annotations every built-in tool shares to opts.
func readOnly(openWorld bool, opts ...mcp.ToolOption) []mcp.ToolOption {
	return append(opts, mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(openWorld))
}

// toolError is the isError result for a failure of tool, which the model reads.
func toolError(tool string, err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(tool + ": " + err.Error())
}
