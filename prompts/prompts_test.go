package prompts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sampleTool and sampleData have the fields the planner passes.
type sampleTool struct{ Name, Description, Schema, Output string }

type sampleData struct {
	Query, Context string
	Tools          []sampleTool
	Now            time.Time
}

func sample() sampleData {
	return sampleData{
		Query:   "What is 5 factorial and 16 squared?",
		Context: "The user is doing homework.",
		Tools: []sampleTool{
			{"calculator_factorial", "Return n!.", `{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}`, `{"type":"object","properties":{"result":{"type":"number"}}}`},
			{"calculator_square", "Square x.", `{"type":"object","properties":{"x":{"type":"number"}}}`, ""},
		},
		Now: time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC),
	}
}

// render executes t and its "user" block, when it has one.
func render(t *testing.T, name, override string, data any) (system, user string) {
	t.Helper()
	tmpl, err := Load(name, override)
	if err != nil {
		t.Fatal(err)
	}
	var sys, usr strings.Builder
	if err := tmpl.Execute(&sys, data); err != nil {
		t.Fatalf("executing %s: %v", name, err)
	}
	if tmpl.Lookup("user") != nil {
		if err := tmpl.ExecuteTemplate(&usr, "user", data); err != nil {
			t.Fatalf("executing %s user block: %v", name, err)
		}
	}
	return sys.String(), usr.String()
}

func TestEveryTemplateRenders(t *testing.T) {
	names, err := fs.Glob(files, "*"+ext)
	if err != nil || len(names) == 0 {
		t.Fatal("no embedded templates")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			system, user := render(t, name, "", sample())
			if strings.TrimSpace(system) == "" {
				t.Error("empty system prompt")
			}
			if strings.Contains(system+user, "<no value>") {
				t.Error("rendered text has <no value>")
			}
		})
	}
}

func TestDecideTeachesDecisionsPlansAndTools(t *testing.T) {
	system, user := render(t, "decide", "", sample())
	for _, want := range []string{
		"USE_TOOL", "RETRIEVE", "REASON_ONLY", "CLARIFY", "ESCALATE",
		`"depends_on"`, "$<<step_id.path>>", `"$<<s.result>>"`,
		"calculator_factorial: Return n!.",
		`args: {"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}`,
		`  result: {"type":"object","properties":{"result":{"type":"number"}}}` + "\n- calculator_square",
		"only the tools listed", "one JSON object",
	} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	wantUser := "Current time: 2026-03-01 09:30 UTC\n\nContext:\nThe user is doing homework.\n\nRequest:\nWhat is 5 factorial and 16 squared?\n"
	if diff := cmp.Diff(wantUser, user); diff != "" {
		t.Errorf("user message (-want +got):\n%s", diff)
	}
	if strings.Contains(system, "Request:") || strings.Contains(system, "homework") {
		t.Error("the request or its context is in the system prompt; they belong in the user message")
	}
}

func TestDecideWithoutContextOrTools(t *testing.T) {
	d := sample()
	d.Context, d.Tools = "", nil
	system, user := render(t, "decide", "", d)
	if !strings.Contains(system, "(none: do not answer USE_TOOL)") {
		t.Error("an empty tool list is not called out")
	}
	if strings.Contains(user, "Context:") {
		t.Errorf("user message has a Context heading without context:\n%s", user)
	}
}

// TestDecideIsCompact keeps the prompt small enough for small local models:
// about 4 bytes a token, under 1,500 tokens before the tools.
func TestDecideIsCompact(t *testing.T) {
	text, err := Get("decide")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(text); n > 6000 {
		t.Errorf("decide.tmpl is %d bytes, want at most 6000", n)
	}
}

func TestGet(t *testing.T) {
	a, err := Get("decide")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Get("decide.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error(`Get("decide") and Get("decide.tmpl") differ`)
	}
	for _, name := range []string{"nope", "", "../prompts/decide", "sub/decide"} {
		if _, err := Get(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Get(%q): got %v, want fs.ErrNotExist", name, err)
		}
	}
}

func TestOverrideWins(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my-decide.tmpl")
	text := "Plan for {{.Query}} with {{len .Tools}} tools.{{define \"user\"}}U: {{.Query}}{{end}}"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	system, user := render(t, "decide", path, sample())
	if want := "Plan for What is 5 factorial and 16 squared? with 2 tools."; system != want {
		t.Errorf("system: got %q, want %q", system, want)
	}
	if want := "U: What is 5 factorial and 16 squared?"; user != want {
		t.Errorf("user: got %q, want %q", user, want)
	}
}

func TestOverrideErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.tmpl")
	if err := os.WriteFile(broken, []byte("Hello {{.Query"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.tmpl")
	for _, path := range []string{broken, missing} {
		_, err := Load("decide", path)
		if err == nil {
			t.Fatalf("Load(%s): got nil error", path)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
	}
}

func TestMissingKeyIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.tmpl")
	if err := os.WriteFile(path, []byte("{{.Typo}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl, err := Load("decide", path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, map[string]any{"Query": "q"}); err == nil {
		t.Errorf("executing with a missing key: got %q and no error", b.String())
	}
}
