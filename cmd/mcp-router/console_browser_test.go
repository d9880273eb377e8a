package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing/lessons"
	"github.com/mcp-router/mcp-router/state"
)

const consoleToken = "console-test-token-0123456789"

// consoleBrowser returns Chromium and node_modules for the browser test:
// locally the test is skipped without them; in CI (CI set) it fails.
func consoleBrowser(t *testing.T) (chromium, modules string) {
	t.Helper()
	if testing.Short() {
		t.Skip("the browser test starts Chromium; skipped with -short")
	}
	missing := func(format string, args ...any) {
		if os.Getenv("CI") != "" {
			t.Fatalf(format+" (scripts/test installs it)", args...)
		}
		t.Skipf(format+"; skipped locally (scripts/test installs it)", args...)
	}
	chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		missing("Chromium not installed at %s", chromium)
	}
	modules, _ = filepath.Abs(filepath.Join("..", "..", "node_modules"))
	if _, err := os.Stat(filepath.Join(modules, "playwright-core")); err != nil {
		missing("playwright-core not in %s (npm ci)", modules)
	}
	return chromium, modules
}

// nodeIn is the Node.js that package.json pins, else the one on PATH.
func nodeIn(t *testing.T, modules string) string {
	if bin := filepath.Join(modules, ".bin", "node"); fileExists(bin) {
		return bin
	}
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is neither in node_modules nor on PATH")
	}
	return bin
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestConsoleInBrowser runs the built gateway with the console, seeds its
// state with a tool whose definition changed and two lessons, makes calls
// over MCP, and drives the pages in Chromium: login, every page, approving
// the pin, forgetting a lesson, the playground. Then it runs mcp-router
// ui beside the gateway and loads every page read-only. Screenshots are
// kept in artifacts/console at the repository root.
func TestConsoleInBrowser(t *testing.T) {
	chromium, modules := consoleBrowser(t)
	node := nodeIn(t, modules)
	bin := buildBinary(t)
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	seedConsoleState(t, stateDir)
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`state_dir: %q
http: {tokens: [{token: %q, admin: true}]}
profiles:
  default:
    upstreams:
      calculator: {builtin: calculator}
      docs: {builtin: docs}
`, stateDir, consoleToken))
	shots, _ := filepath.Abs(filepath.Join("..", "..", "artifacts", "console"))
	os.RemoveAll(shots) // screenshots of an earlier run
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	base := startProcess(t, regexp.MustCompile(`url=(http://\S+)/mcp`), bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	callThroughGateway(t, base+"/mcp", "calculator_multiply", map[string]any{"a": 6, "b": 7})
	callThroughGateway(t, base+"/mcp", "calculator_divide", map[string]any{"a": 1, "b": 0})
	runBrowserScript(t, node, chromium, base+"/ui", consoleToken, shots, "serve")

	db, err := state.Open(t.Context(), state.Options{Dir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pins, err := integrity.OpenStore(db.Pins())
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := pins.Lookup("builtin:calculator", "add"); p.Pending() || !p.Approved() {
		t.Errorf("calculator/add after approving in the browser: %+v, want approved with nothing pending", p)
	}
	ls, err := db.Lessons().All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 {
		t.Errorf("got %d lessons after forgetting one in the browser, want 1", len(ls))
	}

	// mcp-router ui, beside the running gateway: the same pages, read-only.
	uiOut := startProcess(t, regexp.MustCompile(`(?s)console: (http://\S+)/ui/`), bin, "ui", "--config", cfg)
	runBrowserScript(t, node, chromium, uiOut+"/ui", uiTokenOf(t), shots, "ui")
	t.Logf("screenshots in %s", shots)
}

// seedConsoleState pins calculator's add with a definition the built-in
// server no longer has, so that the gateway finds it changed, and adds
// two lessons.
func seedConsoleState(t *testing.T, dir string) {
	t.Helper()
	ctx := t.Context()
	db, err := state.Open(ctx, state.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pins, err := integrity.OpenStore(db.Pins())
	if err != nil {
		t.Fatal(err)
	}
	old := mcp.NewTool("add", mcp.WithDescription("Add two integers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required()))
	if _, err := pins.Check("builtin:calculator", []mcp.Tool{old}); err != nil {
		t.Fatal(err)
	}
	resolve := func(string) (string, string, bool) { return "builtin:calculator", "add", true }
	if err := pins.ApproveShown("calculator_add", "", resolve); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, l := range []lessons.Lesson{
		{Query: "sum of two numbers", Tool: "calculator_add", Polarity: lessons.Use, Source: lessons.SourceFeedback, Created: now, LastUsed: now, Uses: 1},
		{Query: "search my notes", Tool: "docs_search_documents", Polarity: lessons.Use, Source: lessons.SourceFeedback, Created: now, LastUsed: now, Uses: 2},
	} {
		if _, err := db.Lessons().Put(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
}

var uiToken = make(chan string, 1)

func uiTokenOf(t *testing.T) string {
	select {
	case tok := <-uiToken:
		return tok
	case <-time.After(10 * time.Second):
		t.Fatal("mcp-router ui printed no token")
	}
	return ""
}

// startProcess runs the binary until the test ends and returns the first
// submatch of re in its stdout or stderr (an address).
func startProcess(t *testing.T, re *regexp.Regexp, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 2)
	done := make(chan struct{}, 2)
	scan := func(r io.Reader) {
		defer func() { done <- struct{}{} }()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := sc.Text()
			if tok, ok := strings.CutPrefix(line, "token:"); ok {
				uiToken <- strings.TrimSpace(tok)
			}
			if m := re.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
		}
	}
	go scan(stdout)
	go scan(stderr)
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		<-done
		<-done
	})
	select {
	case addr := <-found:
		return addr
	case <-time.After(30 * time.Second):
		t.Fatalf("%s %s reported no address", filepath.Base(bin), args[0])
	}
	return ""
}

type tokenTransport struct{ token string }

func (b tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// callThroughGateway calls one tool through the gateway's call_tool.
func callThroughGateway(t *testing.T, endpoint, tool string, args map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cl := sdk.NewClient(&sdk.Implementation{Name: "console-test", Version: "1"}, nil)
	s, err := cl.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: tokenTransport{consoleToken}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": tool, "arguments": args}}); err != nil {
		t.Fatal(err)
	}
}

// runBrowserScript runs console/testdata/browser.mjs against the console.
func runBrowserScript(t *testing.T, node, chromium, url, token, shots, mode string) {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("..", "..", "console", "testdata", "browser.mjs"))
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "CONSOLE_URL="+url, "CONSOLE_TOKEN="+token, "SHOTS="+shots, "CHROMIUM="+chromium, "MODE="+mode)
	out, err := cmd.CombinedOutput()
	t.Logf("browser (%s):\n%s", mode, out)
	if err != nil {
		t.Fatalf("browser script (%s): %v", mode, err)
	}
}

func TestUIRefusesANonLoopbackAddress(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "p.yaml", calcProfile)
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:80", "nonsense"} {
		_, _, err := runCLI(t, nil, "ui", "--config", cfg, "--addr", addr)
		if err == nil || !strings.Contains(err.Error(), "--addr") {
			t.Errorf("ui --addr %s: got %v, want an error naming --addr", addr, err)
		}
	}
}
