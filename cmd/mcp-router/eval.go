package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/eval"
)

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
