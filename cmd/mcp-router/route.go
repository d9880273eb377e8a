package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/metatools"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/eval"
)

func newRouteCmd(e *env) *cobra.Command {
	var topK int
	var domains []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "route QUERY... [--top-k N] [--domain D] [--json]",
		Short: "Show how the router ranks the profile's catalog for a query",
		Long: `Connect to the profile's upstreams, rank their tools for QUERY as request_more_tools
would (its words joined into one query, quoted or not, with the lessons serve has learned), and print the candidates with their raw (calibrated) and adjusted (after
domain affinity) scores, what lessons added, upstream and domain, the tools that would be selected,
and any routing alert. --domain sets the session's domain context (repeatable);
without it no affinity applies.`,
		Example: `  mcp-router route divide two numbers
  mcp-router route "query logs" --domain homeassistant --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withGateway(cmd.Context(), parts{wait: true, lessons: true}, func(g *gateway) error { // lessons apply as in serve
				if topK > 0 {
					g.prof.Routing.TopK = topK
				}
				r, err := g.router(cmd.Context())
				if err != nil {
					return err
				}
				indexCatalog(cmd.Context(), r, g.hub.Catalog().RoutingTools(), g.log)
				d := r.Route(cmd.Context(), routing.Request{Query: strings.Join(args, " "), Domains: domains,
					Principal: proxy.LocalPrincipal}) // the person at the machine, as over stdio
				d = metatools.Outages(routeUpstreams(g), d, r.Options().CrossDomain)
				if asJSON {
					return printJSON(e, routeView(d, max(r.Options().TopK, 10)))
				}
				return printRouteTable(e.stdout, d, max(r.Options().TopK, 10))
			})
		},
	}
	cmd.Flags().IntVar(&topK, "top-k", 0, "tools kept whatever their score (default: the profile's routing.top_k)")
	cmd.Flags().StringSliceVar(&domains, "domain", nil, "a domain of the session's context (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// indexCatalog puts the tools of each upstream in the router, embeddings included when they are on.
func indexCatalog(ctx context.Context, r *routing.Router, byUpstream map[string][]routing.Tool, log *slog.Logger) {
	for up, tools := range byUpstream {
		r.SetUpstream(up, tools)
		if err := r.Embed(ctx, up, tools); err != nil {
			log.Warn("embeddings unavailable; ranking lexically", "upstream", up, "err", err)
		}
	}
}

// routeUpstreams is the profile's upstreams as request_more_tools sees them, for its outage alerts:
// connected or not, and the disabled ones.
func routeUpstreams(g *gateway) []metatools.Upstream {
	status := map[string]proxy.Status{}
	for _, s := range g.hub.Status() {
		status[s.Name] = s
	}
	out := make([]metatools.Upstream, 0, len(g.prof.Upstreams)+len(g.prof.Disabled))
	for _, cfg := range g.prof.Upstreams {
		st := status[cfg.Name]
		out = append(out, metatools.Upstream{Name: cfg.Name, Domain: cfg.EffectiveDomain(), About: cfg.Description,
			Connected: st.State == proxy.StateConnected, EverConnected: st.EverConnected, Starting: st.Starting,
			Since: st.Since, DownSince: st.DownSince})
	}
	for _, d := range g.prof.Disabled {
		out = append(out, metatools.Upstream{Name: d.Name, Domain: cmp.Or(d.Domain, d.Name), About: d.Description, Disabled: true, Reason: d.Reason})
	}
	return out
}

type routeJSON struct {
	Query    string          `json:"query"`
	Tools    []routeTool     `json:"tools"`
	Selected []string        `json:"selected"`
	Alerts   []routing.Alert `json:"alerts"`
	// Abstained: nothing in the catalog serves the query.
	Abstained bool `json:"abstained"`
}

type routeTool struct {
	Name     string  `json:"name"`
	Upstream string  `json:"upstream"`
	Domain   string  `json:"domain"`
	Score    float64 `json:"score"`
	RawScore float64 `json:"raw_score"`
	// Lesson is what learned lessons added to RawScore (negative: took away).
	Lesson float64 `json:"lesson,omitempty"`
}

func routeView(d routing.Decision, n int) routeJSON {
	out := routeJSON{Query: d.Query, Tools: []routeTool{}, Selected: []string{}, Alerts: d.Alerts, Abstained: d.Abstained}
	for _, c := range d.Ranked[:min(n, len(d.Ranked))] {
		out.Tools = append(out.Tools, routeTool{Name: c.Name, Upstream: c.Upstream, Domain: c.Domain, Score: c.Score, RawScore: c.RawScore, Lesson: c.Lesson})
	}
	for _, c := range d.Selected {
		out.Selected = append(out.Selected, c.Name)
	}
	if out.Alerts == nil {
		out.Alerts = []routing.Alert{}
	}
	return out
}

func printRouteTable(w io.Writer, d routing.Decision, n int) error {
	v := routeView(d, n)
	tw := newTable(w, "RANK\tTOOL\tUPSTREAM\tDOMAIN\tRAW\tSCORE\tSELECTED")
	for i, t := range v.Tools {
		sel := ""
		if slices.Contains(v.Selected, t.Name) {
			sel = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.3f\t%.3f\t%s\n", i+1, t.Name, t.Upstream, t.Domain, t.RawScore, t.Score, sel)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nselected: %s\n", strings.Join(v.Selected, ", "))
	for _, a := range v.Alerts {
		fmt.Fprintf(w, "\n%s\n", a.Message)
	}
	return nil
}

func newEvalCmd(e *env) *cobra.Command {
	var toolsPath, queriesPath, outPath string
	var k int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "eval --tools TOOLS.jsonl --queries QUERIES.jsonl [--out RANKINGS.jsonl] [--k 10] [--json]",
		Short: "Measure routing quality on a tool-retrieval dataset",
		Long: `Rank the given catalog for each query as request_more_tools would with no
session context (the dataset's "server" is the tool's domain), and print R@1,
R@5, R@10, NDCG@5, C@5, C@10, MRR and per-query latency p50/p99. With --out,
write one line {"id": ..., "ranked": [top-k names]} per query.

tools.jsonl:   {"name", "description", "input_schema", "server"} per line
queries.jsonl: {"id", "query", "gold": [names], "gold_groups"?: [[names]]} per line

The profile's routing settings apply (and embeddings, when ollama.embed_model is set).`,
		Example: `  mcp-router eval --tools bench/bfcl/tools.jsonl --queries bench/bfcl/queries.jsonl`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tools, queries, err := loadDataset(toolsPath, queriesPath)
			if err != nil {
				return err
			}
			cfg, prof, err := e.loadConfig()
			if err != nil {
				return err
			}
			g := e.newGateway(cfg, prof, parts{}) // its router alone: no hub
			r, err := g.router(cmd.Context())
			if err != nil {
				return err
			}
			byServer := map[string][]routing.Tool{}
			for _, t := range tools {
				byServer[t.Upstream] = append(byServer[t.Upstream], t)
			}
			indexCatalog(cmd.Context(), r, byServer, g.log)
			rep, rankings := eval.Run(ranker{cmd.Context(), r}, queries, eval.Options{K: k})
			if outPath != "" {
				if err := writeRankings(outPath, rankings); err != nil {
					return err
				}
			}
			if asJSON {
				return printJSON(e, reportJSON(rep))
			}
			_, err = fmt.Fprint(e.stdout, rep.String())
			return err
		},
	}
	cmd.Flags().StringVar(&toolsPath, "tools", "", "tools.jsonl: the catalog (required)")
	cmd.Flags().StringVar(&queriesPath, "queries", "", "queries.jsonl: queries with gold tools (required)")
	cmd.Flags().StringVar(&outPath, "out", "", "write the rankings here, one JSON line per query")
	cmd.Flags().IntVar(&k, "k", 10, "ranking depth")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the metrics as JSON")
	cmd.MarkFlagRequired("tools")
	cmd.MarkFlagRequired("queries")
	return cmd
}

// ranker ranks with the router as request_more_tools does with no session context.
type ranker struct {
	ctx context.Context
	r   *routing.Router
}

func (x ranker) Rank(query string, k int) []string {
	hits := x.r.Rank(x.ctx, query, k)
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func loadDataset(toolsPath, queriesPath string) ([]routing.Tool, []eval.Query, error) {
	tools, err := loadFile(toolsPath, eval.LoadTools)
	if err != nil {
		return nil, nil, err
	}
	queries, err := loadFile(queriesPath, eval.LoadQueries)
	return tools, queries, err
}

// loadFile reads path with load; the error names the file.
func loadFile[T any](path string, load func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

func writeRankings(path string, rankings []eval.Ranking) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range rankings {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func reportJSON(r eval.Report) map[string]any {
	return map[string]any{
		"queries": r.Queries, "single": r.Single, "multi": r.Multi, "skipped": r.Skipped,
		"r@1": r.R1, "r@5": r.R5, "r@10": r.R10, "ndcg@5": r.NDCG5, "c@5": r.C5, "c@10": r.C10, "mrr": r.MRR,
		"p50_us": r.P50.Microseconds(), "p99_us": r.P99.Microseconds(),
	}
}
