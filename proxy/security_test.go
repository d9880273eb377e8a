package proxy

import (
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// hostile is what a client might try to smuggle into an upstream's
// command line or environment: it appears in headers, tool arguments,
// _meta, capabilities and made-up methods below, and must never reach a
// child process.
const hostile = "sec07-injected"

var hostileHeaders = map[string]string{
	"X-Command": "/bin/sh -c " + hostile, "X-Upstream-Args": "--" + hostile,
	"X-Env": "SEC07_INJECTED=" + hostile, "X-Cwd": "/" + hostile,
}

// argvOf calls the fake upstream's argv tool through the client-facing
// server of session sid: the child's own os.Args and os.Environ.
func argvOf(t *testing.T, g *guarded, sid string, tool string) fakeupstream.Argv {
	t.Helper()
	r := g.post(t, toolsCall(t, 90, tool, map[string]any{}), inSession(sid)).reply(t).tool(t)
	var a fakeupstream.Argv
	if err := json.Unmarshal([]byte(r.text()), &a); err != nil {
		t.Fatalf("%s: %v in %.300q", tool, err, r.text())
	}
	return a
}

// SEC-07: no MCP request can add, alter or parameterise an upstream's
// command line, and a stdio child gets a minimal environment. The child
// reports its own argv and environment before and after hostile requests
// and after a restart (a respawn is where a parameterised command line
// would show). That inherit_env opts into the proxy's whole environment,
// and that the configured env reaches the child, is
// TestChildEnvironmentIsMinimal.
func TestSEC07SpawnOnlyFromConfig(t *testing.T) {
	t.Setenv("MCP_ROUTER_SEC07_SECRET", "only-in-the-proxy")
	up := stdioFake("alpha")
	up.Args = []string{"--configured"}
	up.Env["CONFIGURED"] = "yes"
	h := startHub(t, up)
	waitForTool(t, h, "alpha_argv")
	g := serveRawHTTP(t, newBIServer(t, h))
	sid := g.initialize(t, hostileHeaders)

	first := argvOf(t, g, sid, "alpha_argv")
	if want := []string{up.Command, "--configured"}; !slices.Equal(first.Args, want) {
		t.Errorf("child argv %q, want the configured %q", first.Args, want)
	}
	env := environMap(first.Env)
	if env["CONFIGURED"] != "yes" {
		t.Errorf("configured env missing in the child: %q", first.Env)
	}
	for k := range env {
		if _, configured := up.Env[k]; !configured && !upstream.Inheritable(k) && k != upstream.ChildTagVar {
			t.Errorf("child has %s, neither configured nor on the minimal allowlist", k)
		}
	}
	if v, ok := env["MCP_ROUTER_SEC07_SECRET"]; ok {
		t.Errorf("the proxy's secret reached the child: %q", v)
	}

	t.Run("hostile requests", func(t *testing.T) {
		spawn := map[string]any{"command": "/bin/sh", "args": []string{"-c", hostile},
			"env": map[string]string{"SEC07_INJECTED": hostile}, "cwd": "/" + hostile}
		hdr := maps.Clone(hostileHeaders)
		maps.Copy(hdr, inSession(sid))
		call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
			"name": "alpha_echo", "arguments": map[string]any{"text": hostile, "command": spawn["command"], "args": spawn["args"]},
			"_meta": map[string]any{"upstream": spawn, "progressToken": hostile}}})
		if got := g.post(t, string(call), hdr).reply(t).tool(t).text(); got != hostile {
			t.Errorf("echo with spawn-like arguments: got %q, want %q", got, hostile)
		}
		via, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
			"name": "call_tool", "arguments": map[string]any{"name": "alpha_echo", "arguments": map[string]any{"text": "x", "env": spawn["env"]}}}})
		g.post(t, string(via), hdr).reply(t)
		for i, method := range []string{"upstreams/add", "servers/spawn", "router/config", "notifications/upstreams/changed"} {
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 10 + i, "method": method,
				"params": map[string]any{"name": "evil", "command": spawn["command"], "args": spawn["args"], "env": spawn["env"]}})
			if r := g.post(t, string(body), hdr); strings.HasPrefix(method, "notifications/") {
				continue // a notification gets no answer
			} else if m := r.reply(t); m.code() != -32601 {
				t.Errorf("%s: got %.300s, want method not found (-32601)", method, m.raw)
			}
		}
		if st := h.Status(); len(st) != 1 || st[0].Name != "alpha" {
			t.Errorf("upstreams after the requests: %+v, want alpha only", st)
		}
	})

	t.Run("respawned child", func(t *testing.T) {
		restarts := h.Status()[0].Restarts
		g.post(t, toolsCall(t, 30, "alpha_crash", map[string]any{"command": "/bin/sh"}), inSession(sid))
		eventually(t, 30*time.Second, "alpha restarted and connected", func() bool {
			st := h.Status()[0]
			return st.Restarts > restarts && st.State == StateConnected
		})
		again := argvOf(t, g, sid, "alpha_argv")
		if !slices.Equal(again.Args, first.Args) {
			t.Errorf("after restart argv %q, want %q as before", again.Args, first.Args)
		}
		got, want := environMap(again.Env), environMap(first.Env)
		if got[upstream.ChildTagVar] == want[upstream.ChildTagVar] && runtime.GOOS == "linux" {
			t.Errorf("the respawned child has its predecessor's tag %s", got[upstream.ChildTagVar])
		}
		delete(got, upstream.ChildTagVar) // one per child, by design
		delete(want, upstream.ChildTagVar)
		if !maps.Equal(got, want) {
			t.Errorf("after restart the environment changed:\n got %q\nwant %q", again.Env, first.Env)
		}
		for _, s := range append(again.Args, again.Env...) {
			if strings.Contains(s, hostile) || strings.Contains(s, "SEC07_INJECTED") {
				t.Errorf("a request's value reached the child: %q", s)
			}
		}
	})
}

// waitForTool waits for a stdio upstream's tool: a child can take longer
// to start than the hub's first wait on a loaded machine.
func waitForTool(t *testing.T, h *Hub, name string) {
	t.Helper()
	eventually(t, 30*time.Second, name+" in the catalog", func() bool { _, ok := h.Catalog().Tool(name); return ok })
}

func environMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// SEC-12: an untrusted upstream's annotations do not reach clients: the
// fake's argv tool claims read-only, not destructive, idempotent and
// closed world; a client sees the conservative reading unless the
// configuration trusts the upstream or vouches for the tool. The pin still
// hashes what the upstream sent, so a change of its claims is a rug pull.
func TestSEC12AnnotationsUntrusted(t *testing.T) {
	yes, no := true, false
	conservative := hints{readOnly: false, destructive: &yes, idempotent: false, openWorld: &yes}
	for _, tt := range []struct {
		name  string
		setup func(*UpstreamConfig)
		want  hints
	}{
		{"untrusted", func(*UpstreamConfig) {}, conservative},
		{"trust_annotations", func(u *UpstreamConfig) { u.TrustAnnotations = true },
			hints{readOnly: true, destructive: &no, idempotent: true, openWorld: &no}},
		{"read_only_tools", func(u *UpstreamConfig) { u.ReadOnlyTools = []string{"argv"} },
			hints{readOnly: true, destructive: &no, idempotent: true, openWorld: &yes}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store := sharedPins(t, t.TempDir())
			up := stdioFake("alpha")
			tt.setup(&up)
			h := pinnedHub(t, store, integrity.Warn, up)
			waitForTool(t, h, "alpha_argv")
			c := overHTTP(t, h)
			res, err := c.session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range res.Tools {
				a := tool.Annotations
				if tool.Name == "alpha_argv" {
					got := hints{readOnly: a.ReadOnlyHint, destructive: a.DestructiveHint, idempotent: a.IdempotentHint, openWorld: a.OpenWorldHint}
					if !sameHints(got, tt.want) {
						t.Errorf("alpha_argv hints as the client sees them: %s, want %s", showHints(got), showHints(tt.want))
					}
				} else if strings.HasPrefix(tool.Name, "alpha_") && tt.name != "trust_annotations" && (a == nil || a.ReadOnlyHint || a.IdempotentHint) {
					t.Errorf("%s: annotations %+v, want conservative", tool.Name, a)
				}
			}
			raw := h.set().byName["alpha"].Listing().Raw
			i := slices.IndexFunc(raw, func(tool mcp.Tool) bool { return tool.Name == "argv" })
			if i < 0 || raw[i].Annotations.ReadOnlyHint == nil || !*raw[i].Annotations.ReadOnlyHint {
				t.Fatalf("the upstream's own argv does not claim read-only: %+v", raw)
			}
			if pin, _ := store.Lookup(PinKey(up), "argv"); pin.Hash != integrity.ContractOf(raw[i]).Hash {
				t.Errorf("the pin hashes %s, want the upstream's contract %s", pin.Hash, integrity.ContractOf(raw[i]).Hash)
			}
		})
	}
}

// hints are the behaviour hints of a tool as a go-sdk client reads them
// (readOnlyHint and idempotentHint default to false; the others are
// pointers, nil when absent).
type hints struct {
	readOnly, idempotent   bool
	destructive, openWorld *bool
}

func sameHints(a, b hints) bool {
	eq := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.readOnly == b.readOnly && a.idempotent == b.idempotent && eq(a.destructive, b.destructive) && eq(a.openWorld, b.openWorld)
}

func showHints(h hints) string {
	show := func(p *bool) string {
		if p == nil {
			return "absent"
		}
		return strconv.FormatBool(*p)
	}
	return fmt.Sprintf("readOnly=%t destructive=%s idempotent=%t openWorld=%s", h.readOnly, show(h.destructive), h.idempotent, show(h.openWorld))
}
