// Command learngen derives the routing package's learned table
// (learned.txt, see internal/learn) from the public query→tool pairs of
// the shared routing benchmark (../shared/bench/routing from a clone):
//
//	go run ./routing/internal/learngen -bench ../shared/bench/routing -out routing/learned.txt
//
// -train names the sets it learns from (all four by default); the
// held-out measure in routing/eval (TestLearnedHeldOut) learns from some
// and judges on the others.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/routing/eval"
	"github.com/mcp-router/mcp-router/routing/internal/learn"
)

func main() {
	bench := flag.String("bench", "../shared/bench/routing", "directory of the shared routing benchmark sets")
	train := flag.String("train", "metatool,etom,bfcl,seal_tools", "comma-separated sets to learn from")
	out := flag.String("out", "learned.txt", "file to write")
	flag.Parse()
	if err := run(*bench, strings.Split(*train, ","), *out); err != nil {
		fmt.Fprintln(os.Stderr, "learngen:", err)
		os.Exit(1)
	}
}

func run(bench string, sets []string, out string) error {
	var examples []learn.Example
	for _, set := range sets {
		ex, err := load(filepath.Join(bench, set))
		if err != nil {
			return fmt.Errorf("set %s: %w", set, err)
		}
		examples = append(examples, ex...)
	}
	header := fmt.Sprintf("Learned by routing/internal/learngen from the query->tool pairs of: %s\n"+
		"(see LEARNED_LICENSES). One line a request word (a stem), a tab, the tool words it points to.\n",
		strings.Join(sets, ", "))
	return os.WriteFile(out, []byte(learn.Format(header, learn.Learn(examples, learn.Options{}))), 0o644)
}

// load reads one set's tools and queries as examples.
func load(dir string) ([]learn.Example, error) {
	tf, err := os.Open(filepath.Join(dir, "tools.jsonl"))
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	tools, err := eval.LoadTools(tf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tf.Name(), err)
	}
	qf, err := os.Open(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	defer qf.Close()
	queries, err := eval.LoadQueries(qf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", qf.Name(), err)
	}
	qs := make([]string, len(queries))
	gold := make([][]string, len(queries))
	for i, q := range queries {
		qs[i], gold[i] = q.Query, slices.Concat(q.Groups()...)
	}
	return learn.Examples(tools, qs, gold), nil
}

