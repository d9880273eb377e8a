package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/planner"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/routing"
)

func newRunCmd(e *env) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "run PLAN.json [--dry-run]",
		Short: "Run a multi-step tool plan (the run_plan format) and print the result",
		Long: `Validate and run a plan against the profile's catalog, exactly as the run_plan tool
does, and print the result (strategy, waves, each step's status and result) as JSON.
PLAN.json is {"steps": [{"id", "tool", "args", "depends_on"?, "timeout_ms"?, "foreach"?}],
"on_error"?, "deadline_ms"?, "max_parallel"?, "output"?}; "-" reads standard input.
The exit status is 1 when the plan is invalid or a step failed.`,
		Example: `  mcp-router run plan.json
  echo '{"steps":[{"id":"a","tool":"calculator_add","args":{"a":1,"b":2}}]}' | mcp-router run -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readArg(e, args[0])
			if err != nil {
				return err
			}
			p, err := executor.Decode(data)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			p.DryRun = p.DryRun || dryRun
			return e.withGateway(cmd.Context(), parts{audit: true, wait: true}, func(g *gateway) error {
				res, err := g.executor().Run(cmd.Context(), p, nil)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				if err := printJSON(e, res); err != nil {
					return err
				}
				if proxy.PlanResult(res).IsError {
					return fmt.Errorf("a step of %s failed", args[0])
				}
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate only, call nothing")
	return cmd
}

func newPlanCmd(e *env) *cobra.Command {
	var run bool
	var context string
	cmd := &cobra.Command{
		Use:   "plan QUERY [--run]",
		Short: "Ask the local planner (ollama.chat_model) how to handle a request",
		Long: `Route QUERY to the best catalog tools, ask the configured Ollama chat model for a
decision (USE_TOOL, RETRIEVE, REASON_ONLY, CLARIFY or ESCALATE) with a plan, and print
it as JSON with its composite confidence and every factor. With --run, a USE_TOOL
plan is run and its result printed too. Needs ollama.chat_model in profiles.yaml.`,
		Example: `  mcp-router plan "what is 17% of 2340, then its square root"
  mcp-router plan "fetch example.com and list its links" --run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			cfg, prof, err := e.loadConfig()
			if err != nil {
				return err
			}
			if cfg.Ollama.ChatModel == "" {
				return fmt.Errorf("%s: plan needs ollama.chat_model (a local Ollama chat model)", cfg.File)
			}
			g := e.newGateway(cfg, prof, parts{audit: run, wait: true}) // the plan's calls are recorded
			defer g.Close()
			if err := g.Start(cmd.Context()); err != nil {
				return err
			}
			defer func() { err = errors.Join(err, g.down()) }()
			out, err := g.plan(cmd.Context(), args[0], context, run)
			if err != nil {
				return err
			}
			return printJSON(e, out)
		},
	}
	cmd.Flags().BoolVar(&run, "run", false, "run the plan when the decision is USE_TOOL")
	cmd.Flags().StringVar(&context, "context", "", "anything the planner should know")
	return cmd
}

// plan asks the planner about query, with the catalog's best tools for
// it, and runs a USE_TOOL plan when run is set.
func (g *gateway) plan(ctx context.Context, query, note string, run bool) (map[string]any, error) {
	r, err := g.router(ctx)
	if err != nil {
		return nil, err
	}
	indexCatalog(ctx, r, g.hub.Catalog().RoutingTools(), g.log)
	pl, err := g.planner()
	if err != nil {
		return nil, err
	}
	routed := r.Route(ctx, routing.Request{Query: query, Principal: proxy.LocalPrincipal})
	d := pl.Decide(ctx, proxy.PlannerRequest(g.hub.Catalog(), routed, query, note))
	out := map[string]any{"decision": d}
	if run && d.Decision == planner.UseTool {
		p, err := executor.Decode(d.Plan)
		if err != nil {
			return nil, err
		}
		res, err := g.executor().Run(ctx, p, nil)
		if err != nil {
			return nil, err
		}
		out["result"] = res
		out["decision"] = pl.AfterRun(d, planner.Failures(res)) // a failed step escalates the decision
	}
	return out, nil
}

func readArg(e *env, path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(e.stdin)
	}
	return os.ReadFile(path)
}

func printJSON(e *env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
