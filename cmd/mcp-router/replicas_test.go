package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/internal/pgtest"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/state"
)

const replicaToken = "replica-test-token"

// nginxBinary is Debian's nginx (scripts/test installs it), or the test
// skips; under CI (CI set) it fails instead: CI must test replicas.
func nginxBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"nginx", "/usr/sbin/nginx"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("nginx is not installed: CI must test replicas behind it (scripts/test installs it)")
	}
	t.Skip("nginx is not installed: replicas behind a load balancer not tested (apt-get install nginx)")
	return ""
}

// cluster is several replicas of the gateway on one PostgreSQL database,
// behind nginx configured with deploy/nginx/mcp-router.conf.
type cluster struct {
	bin, cfg, dir string
	env           []string
	replicas      []*exec.Cmd
	addrs         []string // base URLs
	url           string   // nginx's base URL
}

// remoteUpstream serves the fake upstream over streamable HTTP, the kind of
// upstream every replica can share.
func remoteUpstream(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(server.NewStreamableHTTPServer(fakeupstream.New("remote")))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// newCluster writes the replicas' configuration: a shared session key,
// the database, a quota on remote_pid, the remote upstream.
func newCluster(t *testing.T, pgURL, upstream string) *cluster {
	t.Helper()
	t.Cleanup(replicaTransport.CloseIdleConnections)
	key := make([]byte, 32)
	rand.Read(key)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`http:
  bearer_tokens: [%s]
  session_key: ${MCP_ROUTER_SESSION_KEY}
  trusted_proxies: [127.0.0.1]   # nginx
state:
  url: %q
  required: true
limits:
  quotas:
    - {principal: "*", tool: remote_pid, calls_per_minute: 5}
profiles:
  default:
    upstreams:
      remote: {url: %q}
`, replicaToken, pgURL, upstream))
	return &cluster{bin: buildBinary(t), cfg: cfg, dir: dir,
		env: []string{"MCP_ROUTER_SESSION_KEY=" + base64.StdEncoding.EncodeToString(key)}}
}

// start starts n replicas, each as on a machine of its own (its own state
// directory), and nginx in front of them.
func (c *cluster) start(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		home := filepath.Join(c.dir, fmt.Sprintf("replica%d", i))
		cmd := exec.Command(c.bin, "serve", "--http", "127.0.0.1:0", "--config", c.cfg)
		cmd.Env = isolatedEnv(home, c.env...)
		u := startServeHTTP(t, cmd)
		awaitReady(t, u+"/readyz")
		c.replicas = append(c.replicas, cmd)
		c.addrs = append(c.addrs, u)
	}
	c.url = startNginx(t, c.addrs)
}

// startNginx runs nginx in the foreground with deploy/nginx/mcp-router.conf
// pointed at backends, on a free loopback port, with every path under a
// temporary prefix, and returns its base URL.
func startNginx(t *testing.T, backends []string) string {
	t.Helper()
	bin := nginxBinary(t)
	shared, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nginx", "mcp-router.conf"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var servers strings.Builder
	for _, b := range backends {
		fmt.Fprintf(&servers, "\tserver %s max_fails=1 fail_timeout=5s;\n", strings.TrimPrefix(b, "http://"))
	}
	conf := regexp.MustCompile(`(?m)^\tserver 127\.0\.0\.1:\d+ .*\n`).ReplaceAllString(string(shared), "")
	conf = strings.Replace(conf, "\t# One line per replica.\n", "\t# One line per replica.\n"+servers.String(), 1)
	conf = strings.Replace(conf, "listen 127.0.0.1:8080;", "listen "+addr+";", 1)
	if strings.Count(conf, "server 127.0.0.1:") != len(backends) || !strings.Contains(conf, "listen "+addr) {
		t.Fatalf("deploy/nginx/mcp-router.conf no longer has the upstream block and listen line this test rewrites:\n%s", conf)
	}
	dir, err := os.MkdirTemp("", "nginx") // workers may run as another user: not under t.TempDir's 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	os.Mkdir(filepath.Join(dir, "tmp"), 0o777)
	os.Chmod(filepath.Join(dir, "tmp"), 0o777)
	writeFile(t, dir, "mcp-router.conf", conf)
	main := writeFile(t, dir, "nginx.conf", fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[1]s/tmp/body;
	proxy_temp_path %[1]s/tmp/proxy;
	fastcgi_temp_path %[1]s/tmp/fastcgi;
	uwsgi_temp_path %[1]s/tmp/uwsgi;
	scgi_temp_path %[1]s/tmp/scgi;
	include %[1]s/mcp-router.conf;
}
`, dir))
	cmd := exec.Command(bin, "-p", dir, "-c", main, "-e", filepath.Join(dir, "error.log"))
	out, _ := os.Create(filepath.Join(dir, "stderr.log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		cmd.Wait()
		out.Close()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx error.log:\n%s", log)
		}
	})
	listening := func() bool {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err == nil
	}
	eventually(t, "nginx listening on "+addr, listening)
	return "http://" + addr
}

// stop ends replica i with sig: SIGTERM as a rolling upgrade or a scale
// down does, SIGKILL as a crash or a lost machine.
func (c *cluster) stop(t *testing.T, i int, sig os.Signal) {
	t.Helper()
	c.replicas[i].Process.Signal(sig)
	c.replicas[i].Wait()
}

// callsThrough has each client call remote_echo calls times, one call at
// a time, while during runs once half the calls are answered; it returns
// how many each client had answered right, and what failed.
func callsThrough(t *testing.T, clients map[string]*sdk.ClientSession, calls int, during func()) (ok map[string]int, failed []string) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok = map[string]int{}
	half := make(chan struct{})
	var once sync.Once
	for name, s := range clients {
		wg.Go(func() {
			for i := range calls {
				want := fmt.Sprintf("%s %d", name, i)
				text, err := callSDK(t.Context(), s, "remote_echo", map[string]any{"text": want})
				mu.Lock()
				if err == nil && text == want {
					ok[name]++
				} else {
					failed = append(failed, fmt.Sprintf("%s call %d: %q, %v", name, i, text, err))
				}
				if ok[name] >= calls/2 {
					once.Do(func() { close(half) })
				}
				mu.Unlock()
			}
		})
	}
	select {
	case <-half:
		during()
	case <-t.Context().Done():
	}
	wg.Wait()
	return ok, failed
}

// connectSDK connects the official Go SDK's client to base with the token,
// on the protocol of opts (nil: its newest, 2026-07-28).
func connectSDK(t *testing.T, base string, opts *sdk.ClientSessionOptions) *sdk.ClientSession {
	t.Helper()
	cl := sdk.NewClient(&sdk.Implementation{Name: "replicas-test", Version: "1"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: replicaRT{}}}
	s, err := cl.Connect(context.Background(), tr, opts)
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// replicaTransport keeps a connection per client open (the default keeps
// two per host, so that concurrent clients would open and close
// connections all along).
var replicaTransport = &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}

// replicaRT sends the replicas' bearer token.
type replicaRT struct{}

func (replicaRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+replicaToken)
	return replicaTransport.RoundTrip(r)
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip: a client of its own to nginx.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// tokenStatus is the status of an initialize POSTed to base with token.
func tokenStatus(t *testing.T, cl *http.Client, base, token string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func callSDK(ctx context.Context, s *sdk.ClientSession, name string, args map[string]any) (string, error) {
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	text := sdkText(res)
	if res.IsError {
		return text, fmt.Errorf("%s: %s", name, text)
	}
	return text, nil
}

// eventuallyOK retries check every 100ms until it passes, for up to
// 15s, and names its last error when it gives up.
func eventuallyOK(t *testing.T, what string, check func() error) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(15 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: still %v after 15s", what, err)
		}
	}
}

// Three replicas on one PostgreSQL database behind nginx serve one
// endpoint. A pin approved through one database connection holds on every
// replica; a lesson taught through one applies on all; a quota holds
// across them. Clients of both protocol eras call through nginx while a
// replica is killed: the 2025-11-25 session resumes on another replica
// (no new initialize), the 2026-07-28 client goes on, and the audit
// records, lesson, approval and quota count are all still there.
func TestReplicasBehindNginx(t *testing.T) {
	pgURL := pgtest.Schema(t)
	nginxBinary(t)
	upstream := remoteUpstream(t)

	// remote_echo was pinned with another description: every replica
	// holds it back until it is approved.
	pg, err := state.OpenPostgres(t.Context(), state.PGOptions{URL: pgURL})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	pins, err := integrity.OpenStore(pg.Pins())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pins.Check(proxy.PinKey(proxy.UpstreamConfig{URL: upstream}), []mcp.Tool{mcp.NewTool("echo", mcp.WithDescription("Echo the text back, as pinned before"),
		mcp.WithString("text"))}); err != nil {
		t.Fatal(err)
	}

	c := newCluster(t, pgURL, upstream)
	c.start(t, 3)
	direct := make([]*sdk.ClientSession, len(c.addrs)) // one stateless client per replica
	for i, a := range c.addrs {
		direct[i] = connectSDK(t, a, nil)
	}
	for i, s := range direct {
		if _, err := callSDK(t.Context(), s, "remote_echo", map[string]any{"text": "x"}); err == nil {
			t.Fatalf("replica %d called remote_echo before its changed definition was approved", i)
		}
	}
	pinsV0 := pgCounter(t, pgURL, "pins")
	if _, stderr, err := runCLI(t, nil, "pins", "approve", "remote_echo", "--config", c.cfg); err != nil {
		t.Fatalf("pins approve: %v\n%s", err, stderr)
	}
	if pgCounter(t, pgURL, "pins") == pinsV0 {
		t.Error("the pins change counter did not move on approval")
	}
	for i, s := range direct {
		eventuallyOK(t, fmt.Sprintf("replica %d takes the approval", i), func() error {
			_, err := callSDK(t.Context(), s, "remote_echo", map[string]any{"text": "approved"})
			return err
		})
	}

	// A lesson taught through one replica applies on the others: for
	// this request, remote_log rather than remote_echo, which the search
	// alone does not even list.
	const query = "echo the text back"
	if text, err := callSDK(t.Context(), direct[2], "request_more_tools", map[string]any{"query": query}); err != nil || strings.Contains(text, "remote_log") {
		t.Fatalf("before the lesson: %q, %v; want remote_log not found", text, err)
	}
	lessonsV0 := pgCounter(t, pgURL, "lessons")
	if _, err := callSDK(t.Context(), direct[0], "routing_feedback", map[string]any{"query": query, "wrong_tool": "remote_echo", "right_tool": "remote_log"}); err != nil {
		t.Fatal(err)
	}
	if pgCounter(t, pgURL, "lessons") == lessonsV0 {
		t.Error("the lessons change counter did not move")
	}
	for i := 1; i < len(direct); i++ {
		eventuallyOK(t, fmt.Sprintf("replica %d ranks by the lesson", i), func() error {
			text, err := callSDK(t.Context(), direct[i], "request_more_tools", map[string]any{"query": query})
			if err != nil {
				return err
			}
			if !strings.Contains(text, "remote_log") {
				return fmt.Errorf("request_more_tools found %q", text)
			}
			return nil
		})
	}

	// A quota of 5 calls a minute holds across the replicas: 8 calls
	// spread over three replicas, 5 pass. Its window is a minute of the
	// clock, so the calls start well inside one.
	if s := time.Now().Second(); s > 50 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	passed := 0
	for i := range 8 {
		if _, err := callSDK(t.Context(), direct[i%3], "remote_pid", nil); err == nil {
			passed++
		} else if !strings.Contains(err.Error(), "quota_exceeded") {
			t.Fatalf("remote_pid call %d: %v, want passed or quota_exceeded", i+1, err)
		}
	}
	if passed != 5 {
		t.Errorf("%d of 8 calls of remote_pid passed across 3 replicas, want 5 (the quota)", passed)
	}

	// A client guessing tokens through nginx is refused, on every
	// replica, for refused tokens of its own; another client behind the
	// same nginx is not: the replicas take each one's address from
	// nginx's X-Forwarded-For. nginx spreads requests over the replicas,
	// and each counts its own, so the guesser sends enough for all.
	guesser, other := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
	for i := range 3 * frontdoor.DefaultTokenFailures {
		if got := tokenStatus(t, guesser, c.url, fmt.Sprintf("wrong-%d", i)); got != http.StatusUnauthorized {
			t.Fatalf("wrong token %d through nginx: got %d, want 401", i+1, got)
		}
	}
	for i := range 3 {
		if got := tokenStatus(t, guesser, c.url, replicaToken); got != http.StatusTooManyRequests {
			t.Errorf("the guesser with the right token, request %d: got %d, want 429", i+1, got)
		}
		if got := tokenStatus(t, other, c.url, replicaToken); got != http.StatusOK {
			t.Errorf("another client behind the same nginx, request %d: got %d, want 200", i+1, got)
		}
	}

	// A 2025-11-25 session ended (DELETE) on one replica is not resumed
	// by another: the database holds its end (a hash of its id).
	ended := connectSDK(t, c.addrs[0], &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	endedID := ended.ID()
	if _, err := callSDK(t.Context(), ended, "remote_echo", map[string]any{"text": "x"}); err != nil {
		t.Fatalf("a call in the session to end: %v", err)
	}
	if err := ended.Close(); err != nil {
		t.Fatalf("ending the session (DELETE): %v", err)
	}
	if n := pgInt(t, pgURL, `SELECT count(*) FROM ended_sessions`); n != 1 {
		t.Errorf("ended sessions in the database after a DELETE: %d, want 1", n)
	}
	if got := postInSession(t, c.addrs[1], endedID); got != http.StatusNotFound {
		t.Errorf("a session ended on replica 0, on replica 1: status %d, want 404", got)
	}

	// Both eras through nginx; a replica is killed mid-run.
	old := connectSDK(t, c.url, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	sid := old.ID()
	modern := connectSDK(t, c.url, nil)
	clients := map[string]*sdk.ClientSession{"old": old, "modern": modern}
	const calls = 60
	before := pgInt(t, pgURL, `SELECT count(*) FROM audit WHERE tool = 'remote_echo' AND outcome = 'ok'`)
	ok, failed := callsThrough(t, clients, calls, func() { c.stop(t, 1, syscall.SIGTERM) })
	// The calls in flight on the stopped replica may fail (one per
	// client); every other call passes, and the old session goes on
	// under its id.
	if len(failed) > 2 || ok["old"] < calls-1 || ok["modern"] < calls-1 {
		t.Errorf("through nginx with a replica stopped: %v passed of %d each; failed: %v", ok, calls, failed)
	}
	// Each call answered has its audit record, the stopped replica's
	// too: it wrote its queue before exiting. Records are written in the
	// background, each soon after its call.
	answered := int64(ok["old"] + ok["modern"])
	eventuallyOK(t, "the audit records of the calls answered", func() error {
		n := pgInt(t, pgURL, `SELECT count(*) FROM audit WHERE tool = 'remote_echo' AND outcome = 'ok'`) - before
		if n < answered {
			return fmt.Errorf("%d audit records of remote_echo answered, want the %d calls answered through nginx", n, answered)
		}
		return nil
	})

	// A crash: the clients go on on the last replica.
	ok, failed = callsThrough(t, clients, calls, func() { c.stop(t, 2, syscall.SIGKILL) })
	if len(failed) > 2 || ok["old"] < calls-1 || ok["modern"] < calls-1 {
		t.Errorf("through nginx with a replica killed: %v passed of %d each; failed: %v", ok, calls, failed)
	}
	if old.ID() != sid {
		t.Errorf("the 2025-11-25 session id changed from %q to %q: it did not resume", sid, old.ID())
	}
	if _, err := callSDK(t.Context(), old, "remote_echo", map[string]any{"text": "after"}); err != nil {
		t.Errorf("the 2025-11-25 session after the kill: %v (the session ended: %v)", err, old.Wait())
	}

	// Nothing persisted is lost: the lesson applies on the survivor, the
	// quota count is there, the approval holds (the calls above passed).
	for _, i := range []int{0} {
		text, err := callSDK(t.Context(), direct[i], "request_more_tools", map[string]any{"query": query})
		if err != nil || !strings.Contains(text, "remote_log") {
			t.Errorf("replica %d after the kill: lesson not applied: %q, %v", i, text, err)
		}
	}
	if n := pgQuotaCount(t, pgURL); n != 5 {
		t.Errorf("quota count in the database: %d, want 5", n)
	}
}

// postInSession sends tools/list in 2025-11-25 session sid to a replica
// and returns the status.
func postInSession(t *testing.T, base, sid string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", sid)
	res, err := (&http.Client{Transport: replicaRT{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// pgCounter reads a change counter of the state in the database.
func pgCounter(t *testing.T, pgURL, name string) int64 {
	t.Helper()
	return pgInt(t, pgURL, `SELECT n FROM counters WHERE name = $1`, name)
}

// pgQuotaCount is the highest quota count in the database.
func pgQuotaCount(t *testing.T, pgURL string) int64 {
	t.Helper()
	return pgInt(t, pgURL, `SELECT COALESCE(MAX(n), 0) FROM quota_counts`)
}

func pgInt(t *testing.T, pgURL, query string, args ...any) int64 {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// BenchEnv turns TestReplicasThroughput on; it measures, it checks nothing.
const replicaBenchEnv = "MCP_ROUTER_REPLICA_BENCH"

// TestReplicasThroughput measures tools/call through nginx to one replica
// and to three (and to one replica without nginx), in one run, with
// clients of the stateless protocol calling remote_echo back to back, and
// prints calls/s, p50 and p99 for each. scripts/bench-replicas runs it.
func TestReplicasThroughput(t *testing.T) {
	if os.Getenv(replicaBenchEnv) == "" {
		t.Skipf("%s is not set: a measurement, run by scripts/bench-replicas", replicaBenchEnv)
	}
	pgURL := pgtest.Schema(t)
	nginxBinary(t)
	c := newCluster(t, pgURL, remoteUpstream(t))
	c.start(t, 3)
	arms := []struct {
		name, url string
	}{
		{"direct, 1 replica", c.addrs[0]},
		{"nginx, 1 replica", startNginx(t, c.addrs[:1])},
		{"nginx, 3 replicas", c.url},
	}
	conc := 16
	if v := os.Getenv("MCP_ROUTER_REPLICA_BENCH_CONC"); v != "" {
		fmt.Sscan(v, &conc)
	}
	const dur = 5 * time.Second
	t.Logf("%-18s %5s %8s %9s %9s %9s", "arm", "conc", "calls", "calls/s", "p50 ms", "p99 ms")
	for _, arm := range arms {
		clients := make([]*sdk.ClientSession, conc)
		for i := range clients {
			clients[i] = connectSDK(t, arm.url, nil)
		}
		callSDK(t.Context(), clients[0], "remote_echo", map[string]any{"text": "warm"})
		lat := measureCalls(t, clients, dur)
		slices.Sort(lat)
		pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond) }
		t.Logf("%-18s %5d %8d %9.0f %9.2f %9.2f", arm.name, conc, len(lat), float64(len(lat))/dur.Seconds(), pct(0.50), pct(0.99))
	}
}

// measureCalls has each client call remote_echo back to back for dur and
// returns every call's latency; a failed call fails the test.
func measureCalls(t *testing.T, clients []*sdk.ClientSession, dur time.Duration) []time.Duration {
	var mu sync.Mutex
	var all []time.Duration
	end := time.Now().Add(dur)
	var wg sync.WaitGroup
	for _, s := range clients {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(end) {
				start := time.Now()
				if _, err := callSDK(t.Context(), s, "remote_echo", map[string]any{"text": "bench"}); err != nil {
					t.Error(err)
					return
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return all
}

// A session key that is not 32 bytes of base64 fails serve --http with an
// error naming the file and the key, and never showing the key; an unset
// variable in it matters to serve --http alone.
func TestSessionKeyErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		key, want string
	}{
		"short":      {"c2hvcnQta2V5", "http.session_key: the key is 9 bytes, want 32"},
		"not base64": {"secret!value", "http.session_key: not base64"},
		"unset":      {"${NO_SUCH_SESSION_KEY}", "http.session_key"},
	} {
		cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf("http: {session_key: %q}\n%s", tc.key, calcProfile))
		_, _, err := runCLI(t, nil, "serve", "--http", "127.0.0.1:0", "--config", cfg)
		if err == nil || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s and %q", name, err, cfg, tc.want)
		}
		if err != nil && tc.key != "${NO_SUCH_SESSION_KEY}" && strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: the error shows the key: %v", name, err)
		}
	}
	cfg := writeFile(t, dir, "p.yaml", "http: {session_key: \"${NO_SUCH_SESSION_KEY}\"}\n"+calcProfile)
	if _, stderr, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error"); err != nil {
		t.Errorf("tools with an unset session key variable: %v\n%s", err, stderr)
	}
}
