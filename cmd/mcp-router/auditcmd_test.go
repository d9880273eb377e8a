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

// The built binary records the calls a stdio gateway serves (refusals
// too) in the audit file and state_dir, and `audit` reads them back,
// filtered; bad flags are errors naming them.
func TestAuditCommandReadsWhatServeRecorded(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "audit.jsonl")
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`state_dir: %q
audit: {file: %q, max_bytes: 1MiB, keep: 2}
limits:
  repeat_calls: 2
profiles:
  default:
    upstreams:
      calculator: {builtin: calculator}
`, filepath.Join(dir, "state"), file))
	c := startStdioGateway(t, bin, cfg)
	add := map[string]any{"a": 2, "b": 3}
	for range 3 { // the third is refused: repeated_call
		callTool(t, c, "calculator_add", add)
	}
	callTool(t, c, "call_tool", map[string]any{"name": "calculator_multiply", "arguments": map[string]any{"a": 2, "b": 4}})

	var recs []audit.Record
	eventually(t, "four audit records", func() bool {
		out, errOut, err := runBin(t, bin, "audit", "--json", "--config", cfg)
		if err != nil {
			t.Fatalf("audit --json: %v\n%s", err, errOut)
		}
		if err := json.Unmarshal([]byte(out), &recs); err != nil {
			t.Fatalf("audit --json: %q: %v", out, err)
		}
		return len(recs) == 4
	})
	var outcomes []string
	for _, r := range recs {
		outcomes = append(outcomes, r.Tool+":"+r.Outcome)
		if r.Principal != "local" || r.Upstream != "calculator" || r.RequestBytes == 0 {
			t.Errorf("record %+v: want principal local, upstream calculator, request bytes", r)
		}
	}
	want := "calculator_add:ok calculator_add:ok calculator_add:repeated_call calculator_multiply:ok"
	if got := strings.Join(outcomes, " "); got != want {
		t.Errorf("records %s, want %s", got, want)
	}
	out, _, err := runBin(t, bin, "audit", "--tool", "calculator_multiply", "--since", "1h", "--config", cfg)
	if err != nil || !strings.Contains(out, "PRINCIPAL") || strings.Count(out, "calculator_multiply") != 1 || strings.Contains(out, "calculator_add") {
		t.Errorf("audit --tool calculator_multiply: %v\n%s", err, out)
	}
	out, _, err = runBin(t, bin, "audit", "--principal", "token-000000000000", "--json", "--config", cfg)
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("audit --principal of no calls: %v %q, want []", err, out)
	}
	out, _, err = runBin(t, bin, "audit", "--limit", "1", "--json", "--config", cfg)
	if err != nil || strings.Count(out, `"tool"`) != 1 || !strings.Contains(out, "calculator_multiply") {
		t.Errorf("audit --limit 1: %v\n%s, want the newest record", err, out)
	}
	raw, err := os.ReadFile(file)
	if err != nil || strings.Count(string(raw), "\n") != 4 {
		t.Errorf("audit file: %v\n%s, want four lines", err, raw)
	}
	_, errOut, err := runBin(t, bin, "audit", "--limit", "0", "--config", cfg)
	if err == nil || !strings.Contains(errOut, "--limit 0") {
		t.Errorf("audit --limit 0: %v %q, want an error naming the flag", err, errOut)
	}
}
