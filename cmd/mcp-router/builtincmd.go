package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/server"
	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

func newBuiltinCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "builtin NAME [--http ADDR] [server flags]",
		Short: "Run one built-in MCP server alone (" + strings.Join(builtin.Names(), ", ") + ")",
		Long: `Run a built-in server on its own, over stdio (or streamable HTTP with --http).
The default profile runs these inside the gateway; this is for using or testing
one by itself, or from another MCP client.

  calculator  17 arithmetic tools (add, divide, sqrt, log, factorial, ...)
  web         fetch_url and extract_links (--allow-private to reach local addresses)
  docs        search_documents over the Markdown and text files under --root (default ./docs)`,
		Example: `  mcp-router builtin calculator
  mcp-router builtin docs --root ~/notes
  mcp-router builtin web --http 127.0.0.1:8081`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || slices.Contains([]string{"-h", "--help", "help"}, args[0]) {
				return cmd.Help()
			}
			httpAddr, rest, err := takeFlag(args[1:], "--http")
			if err != nil {
				return err
			}
			srv, err := builtin.New(args[0], rest)
			if err != nil {
				return err
			}
			return e.serveBuiltin(cmd.Context(), srv, httpAddr)
		},
	}
}

func (e *env) serveBuiltin(ctx context.Context, srv *server.MCPServer, httpAddr string) error {
	log := newLogger(e.stderr, e.logLevel)
	if httpAddr != "" {
		// The gateway's Guard is not in front, but bodies are bounded all the same.
		h := http.MaxBytesHandler(server.NewStreamableHTTPServer(srv, server.WithEndpointPath("/mcp")), frontdoor.DefaultMaxBodyBytes)
		ln, err := listen(httpAddr)
		if err != nil {
			return err
		}
		log.Info("serving streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")
		return serveOn(ctx, h, ln, frontdoor.HTTPServerOptions{}, true)
	}
	stdio := server.NewStdioServer(srv)
	stdio.SetErrorLogger(slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	// As many calls at once as the gateway's stdio clients get by default,
	// rather than mcp-go's five.
	server.WithWorkerPoolSize(proxy.DefaultStdioCalls)(stdio)
	server.WithQueueSize(proxy.StdioQueue)(stdio)
	return ignoreEOF(stdio.Listen(ctx, e.stdin, e.stdout))
}

// takeFlag removes "--name VALUE" or "--name=VALUE" from args.
func takeFlag(args []string, name string) (string, []string, error) {
	var value string
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == name:
			if i+1 >= len(args) {
				return "", nil, fmt.Errorf("%s needs a value", name)
			}
			value = args[i+1]
			i++
		case strings.HasPrefix(a, name+"="):
			value = strings.TrimPrefix(a, name+"=")
		default:
			rest = append(rest, a)
		}
	}
	return value, rest, nil
}
