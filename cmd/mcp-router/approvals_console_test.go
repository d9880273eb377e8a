package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// callerToken is a principal without admin: its calls wait for the
// console, where consoleToken's principal answers them.
const callerToken = "caller-test-token-0123456789"

// consoleAnswer is a call's answer as a client without elicitation read it.
type consoleAnswer struct {
	text  string
	isErr bool
	err   error
}

// callWithoutElicitation calls tool on the gateway at base as token, from
// a client that cannot be asked, and sends the answer to out.
func callWithoutElicitation(t *testing.T, base, token, tool string, args map[string]any, out chan<- consoleAnswer) {
	cl := sdk.NewClient(&sdk.Implementation{Name: "no-elicitation", Version: "1"}, nil)
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: tokenTransport{token}}}, &sdk.ClientSessionOptions{ProtocolVersion: sessionEra})
	if err != nil {
		out <- consoleAnswer{err: err}
		return
	}
	defer s.Close()
	res, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		out <- consoleAnswer{err: err}
		return
	}
	out <- consoleAnswer{text: sdkText(res), isErr: res.IsError}
}

// consoleSession is a browser's session in the console at base: a cookie
// jar, and the CSRF token of its pages.
type consoleSession struct {
	base   string
	client *http.Client
	csrf   string
}

// post sends a form as a page of the console's own origin would.
func (c *consoleSession) post(t *testing.T, path string, form url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// pending reads the Approvals page: the id of each waiting call, by tool.
func (c *consoleSession) pending(t *testing.T) map[string]string {
	t.Helper()
	resp, err := c.client.Get(c.base + "/ui/approvals")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindSubmatch(b); m != nil {
		c.csrf = string(m[1])
	}
	ids := map[string]string{}
	row := regexp.MustCompile(`(?s)<tr data-tool="([^"]+)">.*?name="id" value="([0-9a-f]+)"`)
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		ids[m[1]] = m[2]
	}
	return ids
}

// loginConsole logs in to the console at base with token.
func loginConsole(t *testing.T, base, token string) *consoleSession {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &consoleSession{base: base, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if resp := c.post(t, "/ui/login", url.Values{"token": {token}}); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("console login: got %d, want 303", resp.StatusCode)
	}
	return c
}

// waitPending polls the Approvals page until n calls wait, within a bound.
func (c *consoleSession) waitPending(t *testing.T, n int) map[string]string {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ids := c.pending(t)
		if len(ids) >= n {
			return ids
		}
		select {
		case <-deadline.C:
			t.Fatalf("%d calls wait in the console, want %d", len(ids), n)
		case <-tick.C:
		}
	}
}

// An approval and a decline given in the console's Approvals page, over
// HTTP, are audited with the principal that answered: in the audit file's
// JSON lines, and in the state store that mcp-router audit reads. A plan
// approved there has each gated step's record name it too.
func TestApprovalsInTheConsoleRecordWhoAnswered(t *testing.T) {
	bin := buildBinary(t)
	u := newApprovalUpstream(t)
	dir := t.TempDir()
	auditFile := filepath.Join(dir, "audit.jsonl")
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`state_dir: %q
audit: {file: %q}
http: {tokens: [{token: %q, admin: true}, {token: %q}]}
profiles:
  default:
    upstreams:
      up: {url: %q}
    routing: {mode: all}
    approvals: {destructive: true, tools: ["up_write_*"], without_elicitation: console, timeout: 90s}
`, filepath.Join(dir, "state"), auditFile, consoleToken, callerToken, u.url))
	base := startProcess(t, regexp.MustCompile(`url=(http://\S+)/mcp`), bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)

	wiped, written := make(chan consoleAnswer, 1), make(chan consoleAnswer, 1)
	go callWithoutElicitation(t, base, callerToken, "up_wipe", map[string]any{"path": "/data"}, wiped)
	go callWithoutElicitation(t, base, callerToken, "up_write_file", map[string]any{"path": "/etc/motd"}, written)
	planned := make(chan consoleAnswer, 1)
	go callWithoutElicitation(t, base, callerToken, "run_plan", map[string]any{"steps": []any{
		map[string]any{"id": "d", "tool": "up_drop", "args": map[string]any{}},
		map[string]any{"id": "r", "tool": "up_read", "args": map[string]any{"path": "/r"}},
	}}, planned)

	c := loginConsole(t, base, consoleToken)
	ids := c.waitPending(t, 3)
	for tool, decision := range map[string]string{"up_wipe": "approve", "up_write_file": "decline", "run_plan": "approve"} {
		if resp := c.post(t, "/ui/approvals/answer", url.Values{"csrf": {c.csrf}, "id": {ids[tool]}, "decision": {decision}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("answering %s with %s: got %d, want 303", tool, decision, resp.StatusCode)
		}
	}
	if w := <-wiped; w.err != nil || w.isErr || u.count("wipe") != 1 {
		t.Errorf("approved in the console: %+v, upstream saw %d; want the call made once", w, u.count("wipe"))
	}
	if f := <-written; f.err != nil || !f.isErr || !strings.HasPrefix(f.text, "declined_by_user") {
		t.Errorf("declined in the console: %+v; want declined_by_user", f)
	}
	if p := <-planned; p.err != nil || p.isErr || u.count("drop") != 1 || u.count("read") != 1 {
		t.Errorf("plan approved in the console: %+v, upstream saw drop %d read %d; want both steps run", p, u.count("drop"), u.count("read"))
	}

	admin, caller := frontdoor.TokenFingerprint(consoleToken), frontdoor.TokenFingerprint(callerToken)
	records := waitFor(t, func() string { b, _ := os.ReadFile(auditFile); return string(b) }, `"outcome":"declined_by_user"`)
	for _, want := range []string{
		`"principal":"` + caller + `","session":`, // the caller is still the principal
		`"tool":"up_wipe","upstream":"up","outcome":"ok","approval":"approved_in_console","approver":"` + admin + `"`,
		`"tool":"up_write_file","upstream":"up","outcome":"declined_by_user","approver":"` + admin + `"`,
		`"step":"d","outcome":"plan_approved_in_console","approval":"approved_in_console","approver":"` + admin + `"`,
	} {
		if !strings.Contains(records, want) {
			t.Errorf("the audit file lacks %s:\n%s", want, records)
		}
	}
	// the gated step's own record names the approval that let it run; the ungated one none
	step := regexp.MustCompile(`"tool":"up_drop","upstream":"up","plan":"[^"]+","step":"d","outcome":"ok","approval":"approved_with_plan","approver":"` + regexp.QuoteMeta(admin) + `"`)
	if !step.MatchString(records) || strings.Contains(records, `"step":"r","outcome":"ok","approval"`) {
		t.Errorf("the plan's steps' records do not carry the approval that let them run:\n%s", records)
	}
	table := waitFor(t, func() string {
		out, _, _ := runBin(t, bin, "audit", "--config", cfg)
		return out
	}, "declined_by_user by "+admin)
	for _, want := range []string{"ok (approved_in_console) by " + admin, "ok (approved_with_plan) by " + admin} {
		if !strings.Contains(table, want) {
			t.Errorf("mcp-router audit does not say %q:\n%s", want, table)
		}
	}
}

// waitFor polls read, within a bound, until what it reads contains want,
// and returns the last read.
func waitFor(t *testing.T, read func() string, want string) string {
	t.Helper()
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		got := read()
		if strings.Contains(got, want) {
			return got
		}
		select {
		case <-deadline.C:
			t.Errorf("waiting for %q, read:\n%s", want, got)
			return got
		case <-tick.C:
		}
	}
}
