package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

func newCallCmd(e *env) *cobra.Command {
	var argsJSON string
	cmd := &cobra.Command{
		Use:   "call TOOL [--args JSON]",
		Short: "Call one catalog tool and print its result as JSON",
		Long: `Connect to the profile's upstreams, call one tool by its exposed name (as
'mcp-router tools' lists it) and print the MCP result as JSON. The exit status is
1 when the tool reported an error (isError) or could not be called, or when
an upstream of the profile failed to connect (the result is printed all the same).`,
		Example: `  mcp-router call calculator_add --args '{"a": 2, "b": 3}'
  mcp-router call docs_search_documents --args '{"query": "install"}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var toolArgs map[string]any
			if err := json.Unmarshal([]byte(argsJSON), &toolArgs); err != nil {
				return fmt.Errorf("--args must be a JSON object: %w", err)
			}
			return e.withGateway(cmd.Context(), parts{audit: true, wait: true}, func(g *gateway) error {
				res, err := g.hub.CallTool(cmd.Context(), args[0], toolArgs, nil)
				if err == nil {
					err = printJSON(e, res)
				}
				if err == nil && res.IsError {
					err = fmt.Errorf("tool %s returned an error", args[0])
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&argsJSON, "args", "{}", "the tool's arguments as a JSON object")
	return cmd
}
