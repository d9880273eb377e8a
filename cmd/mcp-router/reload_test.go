package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// reloadProfile is a profile of fake stdio upstreams (this test binary),
// each named by its key; extra is more YAML for edit's entry.
func reloadProfile(dir string, names []string, extra string) string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "state_dir: %q\nprofiles:\n  default:\n    core_tools: [gone_echo]\n    upstreams:\n", filepath.Join(dir, "state"))
	for _, n := range names {
		fmt.Fprintf(&b, "      %s:\n        command: %q\n        env: {MCP_ROUTER_FAKE_UPSTREAM: %s", n, exe, n)
		if n == "edit" {
			b.WriteString(extra)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// reloadClient is one MCP client of the gateway that counts the
// tools/list_changed notifications it gets.
type reloadClient struct {
	s       *sdk.ClientSession
	changed atomic.Int64
}

func connectReloadClient(t *testing.T, base string, token ...string) *reloadClient {
	t.Helper()
	var hc *http.Client
	if len(token) > 0 {
		hc = &http.Client{Transport: withToken{token[0]}}
	}
	c := &reloadClient{}
	cl := sdk.NewClient(&sdk.Implementation{Name: "reload-test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { c.changed.Add(1) },
	})
	s, err := cl.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c.s = s
	return c
}

// call calls tool through call_tool and returns its text and whether it
// failed.
func (c *reloadClient) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := c.s.CallTool(t.Context(), &sdk.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": tool, "arguments": args}})
	if err != nil {
		t.Fatalf("call_tool %s: %v (the session did not survive)", tool, err)
	}
	return sdkText(res), res.IsError
}

func (c *reloadClient) mustCall(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	text, failed := c.call(t, tool, args)
	if failed {
		t.Fatalf("call_tool %s failed: %s", tool, text)
	}
	return text
}

// serveForReload starts the built binary serving cfg over HTTP and returns
// its base URL and its log.
func serveForReload(t *testing.T, dir, cfg string, env ...string) (string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = isolatedEnv(dir, env...)
	log := &lockedBuffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	re := regexp.MustCompile(`url=(http://\S+)/mcp`)
	var base string
	eventually(t, "the gateway's address in its log", func() bool {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	return base, log
}

// With two clients connected to serve --http, edits of profiles.yaml apply
// without a restart: an upstream whose entry changed runs again under it
// (and, its tools being the same, no client hears of a change), a removed
// one's tools go (each client, seeing one of them as a core tool, hears of
// it once), an added one's tools come, the untouched one keeps its
// process, and both sessions stay. An edit that does not load is refused:
// the log and status say why, with the file and line, and the running
// configuration stays.
func TestServeAppliesProfileEditsWithoutARestart(t *testing.T) {
	dir := t.TempDir()
	all := []string{"edit", "gone", "keep"}
	cfg := writeFile(t, dir, "profiles.yaml", reloadProfile(dir, all, ""))
	base, log := serveForReload(t, dir, cfg)
	// Every upstream joins before the clients come: what they hear of
	// next is the edits'.
	eventually(t, "every upstream to connect", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	a, b := connectReloadClient(t, base), connectReloadClient(t, base)
	keepPID := a.mustCall(t, "keep_pid", nil)
	editPID := a.mustCall(t, "edit_pid", nil)
	b.mustCall(t, "gone_echo", map[string]any{"text": "x"})

	// 1. edit's entry changes: it restarts with its new environment.
	writeFile(t, dir, "profiles.yaml", reloadProfile(dir, all, ", EDITED: \"yes\""))
	eventually(t, "edit to run with EDITED=yes", func() bool {
		got, _ := a.call(t, "edit_getenv", map[string]any{"name": "EDITED"})
		return got == "yes"
	})
	if got := a.mustCall(t, "edit_pid", nil); got == editPID {
		t.Errorf("edit's process after its entry changed: got the same %s, want a new one", got)
	}

	// 2. gone is removed: its tools go, and each client, which had gone_echo
	// on its list, hears of it.
	saveByRename(t, cfg, reloadProfile(dir, []string{"edit", "keep"}, ", EDITED: \"yes\""))
	eventually(t, "both clients to hear that their tools changed", func() bool {
		return a.changed.Load() >= 1 && b.changed.Load() >= 1
	})
	// The restart of step 1 was not announced: the one notification each
	// got is the removal's.
	if na, nb := a.changed.Load(), b.changed.Load(); na != 1 || nb != 1 {
		t.Errorf("list_changed after a restart and a removal: got %d and %d, want 1 each", na, nb)
	}
	if text, failed := b.call(t, "gone_echo", map[string]any{"text": "x"}); !failed {
		t.Errorf("gone_echo after gone was removed: got %q, want a failure", text)
	}

	// 3. added joins.
	writeFile(t, dir, "profiles.yaml", reloadProfile(dir, []string{"added", "edit", "keep"}, ", EDITED: \"yes\""))
	eventually(t, "added's tools to be callable", func() bool {
		_, failed := b.call(t, "added_echo", map[string]any{"text": "hi"})
		return !failed
	})

	// 4. an edit that does not load is refused; what runs stays.
	writeFile(t, dir, "profiles.yaml", "profiles:\n  default:\n    upstreams: [\n")
	eventually(t, "the refusal in the log", func() bool { return strings.Contains(log.String(), "config edit refused") })
	st := reloadStatus(t, dir, cfg)
	if st.Config == nil || !strings.Contains(st.Config.Refused, cfg) || !strings.Contains(st.Config.Refused, "line") {
		t.Errorf("status after a broken edit: config %+v, want the refusal naming %s and a line", st.Config, cfg)
	}
	if got := b.mustCall(t, "added_echo", map[string]any{"text": "still"}); got != "still" {
		t.Errorf("added_echo after a refused edit: got %q", got)
	}
	if got := a.mustCall(t, "keep_pid", nil); got != keepPID {
		t.Errorf("keep's process: got %s, want %s (an untouched upstream was restarted)", got, keepPID)
	}
	for _, u := range st.Upstreams {
		if u.Name == "keep" && u.Restarts != 0 {
			t.Errorf("keep restarted %d times", u.Restarts)
		}
	}

	// 5. an edit whose variable is not set disables that entry alone: a
	// call of its tool says so, status lists it disabled, keep serves.
	writeFile(t, dir, "profiles.yaml", reloadProfile(dir, []string{"added", "edit", "keep"}, ", EDITED: \"${RELOAD_TEST_UNSET}\""))
	eventually(t, "edit to be disabled", func() bool {
		text, failed := a.call(t, "edit_pid", nil)
		return failed && strings.Contains(text, "disabled")
	})
	eventually(t, "status to list edit as disabled", func() bool {
		good := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf("state_dir: %q\n", filepath.Join(dir, "state"))+calcProfile)
		out, _, err := runCLI(t, nil, "status", "--json", "--config", good)
		var live []gatewayStatus
		if err != nil || json.Unmarshal([]byte(out), &live) != nil || len(live) != 1 || live[0].Snapshot == nil {
			return false
		}
		for _, u := range live[0].Snapshot.Upstreams {
			if u.Name == "edit" {
				return u.State == "disabled" && strings.Contains(u.Err, "RELOAD_TEST_UNSET")
			}
		}
		return false
	})
	if got := a.mustCall(t, "keep_pid", nil); got != keepPID {
		t.Errorf("keep's process after edit was disabled: got %s, want %s", got, keepPID)
	}
}

// saveByRename writes content to path the way many editors save: into
// another file, renamed over path.
func saveByRename(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".swp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// reloadStatus is the snapshot of the one gateway status --json lists.
func reloadStatus(t *testing.T, dir, cfg string) gatewaySnapshot {
	t.Helper()
	var live []gatewayStatus
	eventually(t, "status to list the gateway with its config state", func() bool {
		good := writeFile(t, t.TempDir(), "p.yaml", fmt.Sprintf("state_dir: %q\n", filepath.Join(dir, "state"))+calcProfile)
		out, _, err := runCLI(t, nil, "status", "--json", "--config", good)
		if err != nil || json.Unmarshal([]byte(out), &live) != nil {
			return false
		}
		return len(live) == 1 && live[0].Snapshot != nil && live[0].Snapshot.Config != nil && live[0].Snapshot.Config.Refused != ""
	})
	return *live[0].Snapshot
}

// Edits outside the served profile's upstreams are named as applying at
// the next start; the same file loaded twice names none (every section
// compares equal to itself, whatever it holds).
func TestRestartKeysNameTheSectionsEdited(t *testing.T) {
	dir := t.TempDir()
	base := "http:\n  allowed_origins: [\"https://a.example\"]\nprofiles:\n  default:\n    upstreams:\n      calculator: {builtin: calculator}\n"
	e := &env{getenv: func(string) (string, bool) { return "", false }}
	load := func(content string) (*config.Config, config.Profile) {
		t.Helper()
		cfg, prof, err := e.loadFile(writeFile(t, dir, "p.yaml", content), "")
		if err != nil {
			t.Fatal(err)
		}
		return cfg, prof
	}
	was, wasProf := load(base)
	if got := restartKeys(was, wasProf, was, wasProf); got != nil {
		t.Errorf("restartKeys of one configuration: got %v, want none", got)
	}
	again, againProf := load(base)
	if got := restartKeys(was, wasProf, again, againProf); got != nil {
		t.Errorf("restartKeys of the same file loaded twice: got %v, want none", got)
	}
	now, nowProf := load("limits:\n  start_wait: 3s\n" + strings.Replace(base, "upstreams:", "core_tools: [calculator_add]\n    approvals: {destructive: true}\n    upstreams:", 1))
	want := []string{"limits", "profiles.default.core_tools", "profiles.default.approvals"}
	if got := restartKeys(was, wasProf, now, nowProf); !slices.Equal(got, want) {
		t.Errorf("restartKeys: got %v, want %v", got, want)
	}
}

// mcp-router reload asks each running gateway to read its file again
// (SIGHUP): the gateway reloads and goes on serving.
func TestReloadCommandAsksRunningGateways(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "profiles.yaml", fmt.Sprintf("state_dir: %q\n", filepath.Join(dir, "state"))+calcProfile)
	base, log := serveForReload(t, dir, cfg)
	var out string
	eventually(t, "reload to find the gateway", func() bool {
		var err error
		out, _, err = runCLI(t, nil, "reload", "--config", cfg)
		return err == nil && strings.Contains(out, "asked gateway pid")
	})
	eventually(t, "the gateway to reload", func() bool {
		return strings.Contains(log.String(), "reload asked") && strings.Contains(log.String(), "config reloaded")
	})
	c := connectReloadClient(t, base)
	if got := c.mustCall(t, "calculator_add", map[string]any{"a": 1, "b": 2}); got != "3" {
		t.Errorf("calculator_add after a reload: got %q, want 3", got)
	}
}

// A profile served to the callers mapped to it follows edits too, apart
// from the gateway's own profile.
func TestServeAppliesEditsToCallerProfiles(t *testing.T) {
	dir := t.TempDir()
	profile := func(betaExtra string) string {
		return fmt.Sprintf("state_dir: %q\n", filepath.Join(dir, "state")) + `http:
  tokens:
    - {token: "${ALPHA_TOKEN}", profile: alpha}
    - {token: "${BETA_TOKEN}", profile: beta}
default_profile: alpha
profiles:
  alpha:
    upstreams:
      calculator: {builtin: calculator}
  beta:
    upstreams:
      calculator: {builtin: calculator}
` + betaExtra
	}
	cfg := writeFile(t, dir, "profiles.yaml", profile(""))
	base, _ := serveForReload(t, dir, cfg, "ALPHA_TOKEN=alpha-token", "BETA_TOKEN=beta-token")
	alpha, beta := connectReloadClient(t, base, "alpha-token"), connectReloadClient(t, base, "beta-token")
	writeFile(t, dir, "profiles.yaml", profile("      extra: {builtin: calculator}\n"))
	eventually(t, "beta's callers to reach the added upstream", func() bool {
		_, failed := beta.call(t, "extra_add", map[string]any{"a": 1, "b": 2})
		return !failed
	})
	if text, failed := alpha.call(t, "extra_add", map[string]any{"a": 1, "b": 2}); !failed {
		t.Errorf("alpha's caller reached beta's added upstream: %q", text)
	}
}
