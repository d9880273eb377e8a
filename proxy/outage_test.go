package proxy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/routing"
)

// crashable is a stdio fake upstream that, once its crash file exists,
// exits at every restart: an upstream that goes down and stays down.
func crashable(t *testing.T, name string) (UpstreamConfig, func()) {
	up := stdioFake(name)
	file := filepath.Join(t.TempDir(), "crash")
	up.Env[fakeupstream.CrashFileEnvVar] = file
	return up, func() {
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// takeDown crashes up's child and waits until the hub reports it down.
func takeDown(t *testing.T, h *Hub, name string, crashFile func()) {
	t.Helper()
	crashFile()
	_, _ = h.CallTool(t.Context(), name+"_crash", nil, nil)
	eventually(t, faultWait, name+" to be down", func() bool { return statusOf(h, name).State == StateFailed })
}

// The alert kinds of an outage (metatools).
const (
	alertUpstreamDown     = "upstream_down"
	alertUpstreamStarting = "upstream_starting"
)

func alertOf(d discovery, kind string) (routing.Alert, bool) {
	i := slices.IndexFunc(d.Alerts, func(a routing.Alert) bool { return a.Kind == kind })
	if i < 0 {
		return routing.Alert{}, false
	}
	return d.Alerts[i], true
}

// When the best match belongs to an upstream that went down, its last
// listing still routes, and request_more_tools says the upstream is down
// (text and structuredContent) rather than offering it silently.
func TestRequestMoreToolsSaysTheBestMatchIsDown(t *testing.T) {
	files, crashFile := crashable(t, "files")
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{toolsUpstream("alpha", "alpha_", "ping"), files}, Builtin: faultBuiltins})
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	takeDown(t, h, "files", crashFile)

	res := c.call(t, "request_more_tools", map[string]any{"query": "echo the text back"})
	d := decodeDiscovery(t, res)
	if len(d.Tools) == 0 || d.Tools[0].Name != "files_echo" {
		t.Fatalf("routed %+v, want files_echo first from its last listing", d.Tools)
	}
	a, ok := alertOf(d, alertUpstreamDown)
	if !ok || !slices.Contains(a.Tools, "files_echo") || !strings.Contains(a.Message, "files") || !strings.Contains(a.Message, "down") {
		t.Errorf("alerts %+v, want an upstream_down alert naming files and files_echo", d.Alerts)
	}
	if !strings.Contains(resultText(res), "server files) is down") || !strings.Contains(resultText(res), "(server files, down now,") {
		t.Errorf("text %q does not say files is down", resultText(res))
	}
	outs, _ := res.StructuredContent.(map[string]any)["outages"].([]any)
	if len(outs) != 1 || outs[0].(map[string]any)["upstream"] != "files" || outs[0].(map[string]any)["state"] != "down" {
		t.Errorf("structuredContent outages: %v, want files down", outs)
	}
}

// An upstream that never connected in this run has no listing: a request
// that names it (or its domain) gets an alert that it is down or starting,
// not "no tool matches"; an upstream still starting is named whatever the
// request's words, one that failed only when the request names it.
func TestRequestMoreToolsNamesAnUpstreamThatNeverConnected(t *testing.T) {
	missing := UpstreamConfig{Name: "github", Transport: TransportStdio, Command: "/nonexistent/github-mcp", Prefix: "github_"}
	hung := hungStdio("calendar")
	hung.Domain = "scheduling"
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{toolsUpstream("alpha", "alpha_", "ping"), missing, hung},
		StartWait: 50 * time.Millisecond})
	eventually(t, faultWait, "github's first attempt to fail", func() bool { return statusOf(h, "github").State == StateFailed })
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{})})
	for _, tc := range []struct{ query, kind, upstream string }{
		{"open an issue on GitHub", alertUpstreamDown, "github"},
		{"book a meeting, scheduling it for Monday", alertUpstreamStarting, "calendar"},
	} {
		res := c.call(t, "request_more_tools", map[string]any{"query": tc.query})
		d := decodeDiscovery(t, res)
		a, ok := alertOf(d, tc.kind)
		if !ok || !strings.Contains(a.Message, "server "+tc.upstream) {
			t.Errorf("%q: alerts %+v, want %s naming %s", tc.query, d.Alerts, tc.kind, tc.upstream)
		}
		if _, noMatch := alertOf(d, "no_match"); noMatch {
			t.Errorf("%q: a no_match alert beside the outage: %+v", tc.query, d.Alerts)
		}
	}
	// A request naming no upstream that nothing connected serves hears of
	// the one still starting (its tools could not be ranked) and of the one
	// that never connected (its tools are unknown, so it may serve it), not
	// that the capability is missing.
	d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "translate a poem into French"}))
	if a, ok := alertOf(d, alertUpstreamDown); !ok || !strings.Contains(a.Message, "server github never connected") ||
		!strings.Contains(a.Message, "may serve this request") || !strings.Contains(a.Message, "mcp-router doctor") {
		t.Errorf("unrelated request: alerts %+v, want upstream_down saying github never connected", d.Alerts)
	}
	if a, ok := alertOf(d, alertUpstreamStarting); !ok || !strings.Contains(a.Message, "server calendar is still starting") {
		t.Errorf("unrelated request: alerts %+v, want upstream_starting naming calendar", d.Alerts)
	}
	if _, noMatch := alertOf(d, "no_match"); noMatch {
		t.Errorf("unrelated request: a no_match alert beside the outages: %+v", d.Alerts)
	}
	// A request a connected tool serves does not hear of the failed one.
	d = decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "ping alpha"}))
	if a, ok := alertOf(d, alertUpstreamDown); ok {
		t.Errorf("request alpha serves: got %+v", a)
	}
}

// A detour an outage caused (the first match's upstream was down, so the
// model searched again and used another tool) is not learned.
func TestNoLessonFromADetourAnOutageCaused(t *testing.T) {
	mem := fileLessons(t)
	files, crashFile := crashable(t, "files")
	h := startHub(t, builtinFake("alpha"), files)
	// alpha and files are instances of one server; this test needs the
	// down instance's tools offered, as if they were different tools.
	fuse := routing.DefaultFusePolicy()
	fuse.CollapseDuplicates = false
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: routing.NewRouter(routing.RouterOptions{Lessons: mem, Fuse: &fuse}), Lessons: mem,
		Session: routing.SessionOptions{MaxDiscoveries: 5, ResetAfter: time.Hour}})
	takeDown(t, h, "files", crashFile)

	d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "echo the text back"}))
	if _, ok := alertOf(d, alertUpstreamDown); !ok {
		t.Fatalf("first search: alerts %+v, want files down", d.Alerts)
	}
	if res := c.call(t, "files_echo", map[string]any{"text": "x"}); !res.IsError {
		t.Fatal("a call to the down upstream succeeded")
	}
	c.call(t, "request_more_tools", map[string]any{"query": "repeat my text"})
	if res := c.call(t, "alpha_echo", map[string]any{"text": "x"}); res.IsError {
		t.Fatal(resultText(res))
	}
	mem.Close() // the lesson is learned off the call's path
	if n := mem.Len(); n != 0 {
		t.Errorf("lessons after a detour through an outage: %d (%+v), want none", n, mem.List())
	}
}

// An upstream that never connected is counted as the request's by its
// description too: with a files server down whose name ("fs") and domain
// say nothing, "read a file from the notes folder" hears that the server
// described for it is down, rather than getting another server's reading
// tool alone.
func TestRequestMoreToolsNamesADownUpstreamItsDescriptionMatches(t *testing.T) {
	fs := UpstreamConfig{Name: "fs", Transport: TransportStdio, Command: "/nonexistent/fs-mcp", Prefix: "fs_",
		Description: "Read, write and list the files in my notes folder"}
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{toolsUpstream("memory", "memory_", "read_graph"), fs},
		StartWait: 50 * time.Millisecond})
	eventually(t, faultWait, "fs's first attempt to fail", func() bool { return statusOf(h, "fs").State == StateFailed })
	r := routing.NewRouter(routing.RouterOptions{})
	c := overHTTPWith(t, ServerOptions{Hub: h, Router: r})
	const query = "read a file from the notes folder"
	d := decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": query}))
	if a, ok := alertOf(d, alertUpstreamDown); !ok || !strings.Contains(a.Message, "server fs") {
		t.Errorf("alerts %+v, want upstream_down naming fs", d.Alerts)
	}
	if len(d.Alerts) == 0 || d.Alerts[0].Kind != alertUpstreamDown {
		t.Errorf("alerts %+v, want the outage first", d.Alerts)
	}
	// The other server's tool that shares "read" is handed over as what it
	// is, a stand-in from another domain: at the cross-domain penalty.
	ranked := r.Route(t.Context(), routing.Request{Query: query}).Ranked
	if len(ranked) == 0 || len(d.Tools) == 0 || d.Tools[0].Name != "memory_read_graph" {
		t.Fatalf("ranked %v, handed over %+v; want memory_read_graph", ranked, d.Tools)
	}
	if want := ranked[0].Score * routing.DefaultCrossDomain; d.Tools[0].Score > want+0.01 {
		t.Errorf("memory_read_graph handed over at %.2f, want at most %.2f (ranked %.2f, cross-domain %.1f)",
			d.Tools[0].Score, want, ranked[0].Score, routing.DefaultCrossDomain)
	}
	// Unrelated requests do not hear of it.
	d = decodeDiscovery(t, c.call(t, "request_more_tools", map[string]any{"query": "show the whole knowledge graph"}))
	if a, ok := alertOf(d, alertUpstreamDown); ok {
		t.Errorf("unrelated request: got %+v", a)
	}
}
