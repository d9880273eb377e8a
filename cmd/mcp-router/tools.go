package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/proxy"
)

func newToolsCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [--json]",
		Short: "Connect to the profile's upstreams and print the aggregated tool catalog",
		Long: `Connect to every upstream of the profile, print the tools the gateway exposes
(name, upstream, description) and exit. With --json, print an array of
{"name","upstream","description","input_schema","server_description"}
(the last when the upstream has a description). Handy to check a profile.
It waits for every upstream (each up to its init timeout) and exits 1, naming
them, when any failed to connect or two upstreams want one tool name; it prints
what it got all the same.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withGateway(cmd.Context(), parts{wait: true}, func(g *gateway) error {
				if asJSON {
					return printJSON(e, toolsView(g.hub.Catalog().Tools))
				}
				return printToolsTable(e.stdout, g.hub.Catalog())
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

type toolJSON struct {
	Name        string          `json:"name"`
	Upstream    string          `json:"upstream"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Server is the upstream's configured description, if any.
	Server string `json:"server_description,omitempty"`
}

func toolsView(tools []proxy.Tool) []toolJSON {
	out := make([]toolJSON, len(tools))
	for i, t := range tools {
		out[i] = toolJSON{Name: t.Name, Upstream: t.Upstream, Description: t.Def.Description, InputSchema: t.Def.RawInputSchema,
			Server: t.Server}
	}
	return out
}

// printToolsTable prints the catalog's tools, then what was left out and what was kept but flagged.
func printToolsTable(w io.Writer, c *proxy.Catalog) error {
	tw := newTable(w, "NAME\tUPSTREAM\tDESCRIPTION")
	for _, t := range c.Tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Upstream, firstLine(t.Def.Description, 80))
	}
	fmt.Fprintf(tw, "\n%d tools\n", len(c.Tools))
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, p := range c.Problems {
		fmt.Fprintf(w, "left out: %s\n", p.Text)
	}
	for _, p := range c.Warnings {
		fmt.Fprintf(w, "warning: %s\n", p.Text)
	}
	return nil
}

// newTable starts a table on w under its header (tab-separated columns); Flush prints it.
func newTable(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func newCallCmd(e *env) *cobra.Command {
	var argsJSON string
	cmd := &cobra.Command{
		Use:   "call TOOL [--args JSON]",
		Short: "Call one catalog tool and print its result as JSON",
		Long: `Connect to the profile's upstreams, call one tool by its exposed name (as
'mcp-router tools' lists it) and print the MCP result as JSON. The exit status is
1 when the tool reported an error (isError) or could not be called, and 0 when
the call succeeded: an upstream of the profile that failed to connect is then a
warning on stderr (and named in the error when the call failed).`,
		Example: `  mcp-router call calculator_add --args '{"a": 2, "b": 3}'
  mcp-router call docs_search_documents --args '{"query": "install"}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var toolArgs map[string]any
			if err := json.Unmarshal([]byte(argsJSON), &toolArgs); err != nil {
				return fmt.Errorf("--args must be a JSON object: %w", err)
			}
			g, err := e.startGateway(cmd.Context(), parts{audit: true, wait: true})
			if err != nil {
				return err
			}
			defer g.Close()
			res, err := g.hub.CallTool(cmd.Context(), args[0], toolArgs, nil)
			if err == nil {
				err = printJSON(e, res)
			}
			if err == nil && res.IsError {
				err = fmt.Errorf("tool %s returned an error", args[0])
			}
			if err != nil {
				return errors.Join(err, g.down())
			}
			if down := g.down(); down != nil { // another upstream's: this call did not need it
				fmt.Fprintf(e.stderr, "warning: %v\n", down)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "{}", "the tool's arguments as a JSON object")
	return cmd
}
