package main

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/bridge"
)

func newConnectCmd(e *env) *cobra.Command {
	var token string
	var headers []string
	cmd := &cobra.Command{
		Use:   "connect URL [--header K=V]",
		Short: "Bridge a stdio MCP client to a running `serve --http` gateway",
		Long: `Bridge an MCP client that can only start a command (stdio) to one long-running
gateway (mcp-router serve --http). Messages pass through both ways as they are:
requests, answers, progress and cancellation, list changes, and the gateway's own
requests to the client (sampling, elicitation, roots). When the client closes
stdin the HTTP session is ended. When the gateway cannot be reached or refuses
the token, every waiting request gets a JSON-RPC error saying so. stdout carries
JSON-RPC only; logs go to stderr.

The bearer token is read from MCP_ROUTER_TOKEN (or --token, which other users
of the machine can see in the process list). Messages are limited to 4 MiB.`,
		Example: `  # In the client's configuration: command "mcp-router",
  # args ["connect", "http://127.0.0.1:8080/mcp"], env {"MCP_ROUTER_TOKEN": "<token>"}.
  # From a shell, with the token kept in a file:
  MCP_ROUTER_TOKEN="$(cat ~/.config/mcp-router/token)" mcp-router connect http://127.0.0.1:8080/mcp
  mcp-router connect http://127.0.0.1:8080/mcp --header X-Team=search`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := e.bridgeOptions(args[0], token, headers)
			if err != nil {
				return err
			}
			// warn unless told: an MCP client shows a server's stderr as errors
			opts.Logger = newLogger(e.stderr, cmp.Or(e.logLevel, "warn"))
			return bridge.New(opts).Run(cmd.Context(), e.stdin, e.stdout)
		},
	}
	cmd.Flags().StringVar(&token, "token", "", "bearer token (default: env MCP_ROUTER_TOKEN)")
	cmd.Flags().StringArrayVar(&headers, "header", nil, "an extra HTTP header K=V (repeatable)")
	return cmd
}

// parseHeaders reads connect's --header NAME=VALUE flags.
func parseHeaders(headers []string) (http.Header, error) {
	h := http.Header{}
	for _, kv := range headers {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("--header %q: want NAME=VALUE", kv)
		}
		h.Add(k, v)
	}
	return h, nil
}

// bridgeOptions checks connect's URL and headers and adds the token.
func (e *env) bridgeOptions(rawURL, token string, headers []string) (bridge.Options, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return bridge.Options{}, fmt.Errorf("connect: %q is not a gateway URL like http://127.0.0.1:8080/mcp", rawURL)
	}
	h, err := parseHeaders(headers)
	if err != nil {
		return bridge.Options{}, err
	}
	if token = strings.TrimSpace(e.orEnv(token, "MCP_ROUTER_TOKEN")); token != "" {
		if h.Get("Authorization") != "" {
			return bridge.Options{}, errors.New("--header Authorization and a token (--token or MCP_ROUTER_TOKEN) both set: give one")
		}
		h.Set("Authorization", "Bearer "+token)
	}
	return bridge.Options{URL: u.String(), Header: h}, nil
}
