package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/internal/fakeollama"
)

func TestRunCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", calcProfile)
	plan := writeFile(t, dir, "plan.json", `{"steps": [
		{"id": "a", "tool": "calculator_multiply", "args": {"a": 6, "b": 7}},
		{"id": "b", "tool": "calculator_sqrt", "args": {"x": 16}},
		{"id": "c", "tool": "calculator_add", "args": {"a": "$<<a.result>>", "b": "$<<b.result>>"}}]}`)
	out, _, err := runCLI(t, nil, "run", plan, "--config", cfg, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Strategy string
		Steps    []struct {
			Status string
			Result struct{ Result float64 }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Strategy != "HYBRID_TOOLS" || res.Steps[2].Result.Result != 46 {
		t.Errorf("run: %v\n%s", err, out)
	}
	dry, _, err := runCLI(t, nil, "run", plan, "--dry-run", "--config", cfg, "--log-level", "error")
	if err != nil || !strings.Contains(dry, `"dry_run": true`) {
		t.Errorf("--dry-run: %v\n%s", err, dry)
	}
	bad := writeFile(t, dir, "bad.json", `{"steps": [{"id": "a", "tool": "calculator_nope"}]}`)
	if _, _, err := runCLI(t, nil, "run", bad, "--config", cfg, "--log-level", "error"); err == nil || !strings.Contains(err.Error(), "calculator_nope") {
		t.Errorf("invalid plan: got %v, want an error naming the tool", err)
	}
}

func TestPlanCommandWithAFakeOllama(t *testing.T) {
	fo := fakeollama.New(fakeollama.Options{Chat: func(fakeollama.ChatRequest) (string, error) {
		return `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"divide then take the root",` +
			`"plan":{"steps":[{"id":"d","tool":"calculator_divide","args":{"a":81,"b":9}},` +
			`{"id":"r","tool":"calculator_sqrt","args":{"x":"$<<d.result>>"}}]}}`, nil
	}})
	t.Cleanup(fo.Close)
	cfg := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf("ollama: {url: %q, chat_model: test-model}\n%s", fo.URL(), calcProfile))
	out, _, err := runCLI(t, nil, "plan", "divide 81 by 9 and take the square root", "--run", "--config", cfg, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Decision struct {
			Decision, Strategy string
			Confidence         float64
			Factors            map[string]float64
		}
		Result struct {
			Steps []struct {
				Status string
				Result struct{ Result float64 }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d := got.Decision
	if d.Decision != "USE_TOOL" || d.Strategy != "SEQUENTIAL_TOOLS" || len(d.Factors) == 0 || len(got.Result.Steps) != 2 || got.Result.Steps[1].Result.Result != 3 {
		t.Errorf("plan --run: %s", out)
	}
	noModel := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	if _, _, err := runCLI(t, nil, "plan", "x", "--config", noModel); err == nil || !strings.Contains(err.Error(), "chat_model") {
		t.Errorf("without a chat model: %v", err)
	}
}

// A plan whose step fails when it runs escalates the decision, naming the
// step (seed 003: "if error_in_tools: escalate").
func TestPlanCommandEscalatesAFailedStep(t *testing.T) {
	fo := fakeollama.New(fakeollama.Options{Chat: func(fakeollama.ChatRequest) (string, error) {
		return `{"decision":"USE_TOOL","confidence":0.9,"reasoning":"divide",` +
			`"plan":{"steps":[{"id":"d","tool":"calculator_divide","args":{"a":81,"b":0}}]}}`, nil
	}})
	t.Cleanup(fo.Close)
	cfg := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf("ollama: {url: %q, chat_model: test-model}\n%s", fo.URL(), calcProfile))
	out, _, err := runCLI(t, nil, "plan", "divide 81 by 0", "--run", "--config", cfg, "--log-level", "error")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Decision struct {
			Success          bool
			Query            string
			Decision         string
			EscalationReason string `json:"escalation_reason"`
		}
		Result struct{ Steps []struct{ Status string } }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d := got.Decision
	if len(got.Result.Steps) != 1 || got.Result.Steps[0].Status != "failed" {
		t.Fatalf("want the step failed: %s", out)
	}
	if d.Decision != "ESCALATE" || !strings.HasPrefix(d.EscalationReason, "tool_failure: step d (calculator_divide): ") || d.Success || d.Query != "divide 81 by 0" {
		t.Errorf("got %+v, want a failed ESCALATE on the query, tool_failure naming step d", d)
	}
}

type countingEmbedder struct{ calls int }

func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.calls++
	return [][]float32{{1, 0}}, nil
}

func TestCachedEmbedEmbedsAQueryOnce(t *testing.T) {
	e := &countingEmbedder{}
	embed := cachedEmbed(e)
	for range 3 {
		if v, err := embed(t.Context(), "same query"); err != nil || len(v) != 2 {
			t.Fatalf("embed: %v %v", v, err)
		}
	}
	if e.calls != 1 {
		t.Errorf("the embedder was asked %d times, want once", e.calls)
	}
}
