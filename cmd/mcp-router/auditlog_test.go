package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/audit"
)

// `call` and `run` record their calls as serve does, as the principal
// "local", in the state store (which `audit` reads) and in audit.file.
func TestCallAndRunWriteAuditRecords(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "audit.jsonl")
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`state_dir: %q
audit: {file: %q}
profiles:
  default:
    upstreams:
      calculator: {builtin: calculator}
`, filepath.Join(dir, "state"), file))
	if _, errOut, err := runCLI(t, nil, "call", "calculator_add", "--args", `{"a": 2, "b": 3}`, "--config", cfg); err != nil {
		t.Fatalf("call: %v\n%s", err, errOut)
	}
	plan := writeFile(t, dir, "plan.json", `{"steps": [{"id": "m", "tool": "calculator_multiply", "args": {"a": 2, "b": 4}}]}`)
	if _, errOut, err := runCLI(t, nil, "run", plan, "--config", cfg); err != nil {
		t.Fatalf("run: %v\n%s", err, errOut)
	}

	out, errOut, err := runCLI(t, nil, "audit", "--json", "--config", cfg)
	if err != nil {
		t.Fatalf("audit --json: %v\n%s", err, errOut)
	}
	var recs []audit.Record
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("audit --json: %q: %v", out, err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %s %s %s/%s %s", r.Principal, r.Tool, r.Upstream, r.Plan, r.Step, r.Outcome))
		if r.RequestBytes == 0 || r.ResponseBytes == 0 {
			t.Errorf("record %+v: want the sizes of the arguments and the result", r)
		}
	}
	want := []string{"local calculator_add calculator / ok", "local calculator_multiply calculator "}
	if len(got) != 2 || got[0] != want[0] || !strings.HasPrefix(got[1], want[1]) || !strings.HasSuffix(got[1], "/m ok") {
		t.Errorf("audit records %q, want %q and the plan's step m, ok", got, want)
	}
	raw, err := os.ReadFile(file)
	if err != nil || strings.Count(string(raw), "\n") != 2 || !strings.Contains(string(raw), `"principal":"local"`) {
		t.Errorf("audit file: %v\n%s, want the two records", err, raw)
	}
}
