package main

//lint:file-ignore SA1019 these tests drive the sampling, roots and logging features that clients of 2025-11-25 still use

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

const gatewayToken = "connect-test-token-0123456789"

// startGateway runs the built binary as `serve --http` on a free port, with
// a bearer token from the environment and a stdio fake upstream, and
// returns its MCP URL.
func startGateway(t testing.TB, bin string) string {
	t.Helper()
	dir := t.TempDir()
	exe, _ := fakeupstream.Command("fake")
	cfg := writeFile(t, dir, "p.yaml", fmt.Sprintf(`http:
  bearer_tokens: ["${ROUTER_TOKEN}"]
profiles:
  default:
    upstreams:
      fake: {command: %q, env: {%s: fake}}
    routing: {mode: all}
`, exe, fakeupstream.EnvVar))
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = isolatedEnv(dir, "ROUTER_TOKEN="+gatewayToken)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	var logMu sync.Mutex
	var log strings.Builder
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`url=(http://\S+/mcp)`)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		<-copied
	})
	select {
	case u := <-urls:
		// serve answers at once; the test wants its upstream joined.
		awaitReady(t, strings.TrimSuffix(u, "/mcp")+"/readyz")
		return u
	case <-copied:
	case <-time.After(30 * time.Second):
	}
	logMu.Lock()
	defer logMu.Unlock()
	t.Fatalf("the gateway did not start:\n%s", log.String())
	return ""
}

// connectClient starts `connect URL` as a child process under a real MCP
// client, with token in MCP_ROUTER_TOKEN.
func connectClient(t *testing.T, bin, url, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, *lockedBuffer, error) {
	t.Helper()
	cmd := exec.Command(bin, "connect", url)
	cmd.Env = isolatedEnv(t.TempDir(), "MCP_ROUTER_TOKEN="+token)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "connect-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	return cs, stderr, err
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// A client that can only start a command reaches a running gateway
// through connect: tools, calls, progress, cancellation and the gateway's
// own requests (sampling) all pass, with the token from the environment.
func TestConnectBridgesAClientToServeHTTP(t *testing.T) {
	bin := buildBinary(t)
	url := startGateway(t, bin)
	progress := make(chan *mcp.ProgressNotificationParams, 100)
	cs, stderr, err := connectClient(t, bin, url, gatewayToken, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress <- r.Params
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "test", Role: "assistant", Content: &mcp.TextContent{Text: "hello from the client"}}, nil
		},
	})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	ctx := t.Context()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "fake_echo") {
		t.Errorf("tools %v, want fake_echo among them", names)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake_echo", Arguments: map[string]any{"text": "through the bridge"}})
	if err != nil || resultText(res) != "through the bridge" {
		t.Fatalf("fake_echo: %v, %v", resultText(res), err)
	}

	params := &mcp.CallToolParams{Name: "fake_progress", Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("bridge-progress")
	res, err = cs.CallTool(ctx, params)
	if err != nil || resultText(res) != "done 3 steps" {
		t.Fatalf("fake_progress: %v, %v", res, err)
	}
	// The gateway's HTTP server (mcp-go) writes a session's notifications
	// to whichever of its open streams takes them first, the call's or the
	// standalone one, so their order is not kept across the two.
	seen := map[float64]bool{}
	for range 3 {
		select {
		case p := <-progress:
			if p.ProgressToken != "bridge-progress" {
				t.Errorf("progress with token %v, want bridge-progress", p.ProgressToken)
			}
			seen[p.Progress] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("progress: got %v, want 1, 2 and 3", seen)
		}
	}
	if !seen[1] || !seen[2] || !seen[3] {
		t.Errorf("progress: got %v, want 1, 2 and 3", seen)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake_sample", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || resultText(res) != "sampled: hello from the client" {
		t.Errorf("fake_sample (the gateway's request to the client): %v, %v", resultText(res), err)
	}

	// Cancel a call that hangs once the upstream has it: the upstream sees
	// the cancellation.
	hangCtx, cancelHang := context.WithCancel(ctx)
	hang := &mcp.CallToolParams{Name: "fake_hang"}
	hang.SetProgressToken("hang")
	hangDone := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(hangCtx, hang)
		hangDone <- err
	}()
	select {
	case <-progress: // "waiting": the upstream has the call
	case <-time.After(10 * time.Second):
		t.Fatal("fake_hang never reported that it waits")
	}
	cancelHang()
	if err := <-hangDone; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: got %v, want context.Canceled", err)
	}
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake_cancellations"})
		if err != nil {
			t.Fatal(err)
		}
		if resultText(res) == "1" {
			break
		}
		select {
		case <-deadline.C:
			t.Fatalf("the upstream never saw the cancellation (cancellations %s)", resultText(res))
		case <-tick.C:
		}
	}

	if err := cs.Close(); err != nil {
		t.Errorf("close: %v; connect's stderr:\n%s", err, stderr.String())
	}
	if s := stderr.String(); strings.Contains(s, gatewayToken) {
		t.Errorf("connect logged the token:\n%s", s)
	}
}

// SEC-04: a wrong token is refused by the gateway, and connect says so.
func TestConnectReportsAWrongTokenAndAMissingGateway(t *testing.T) {
	bin := buildBinary(t)
	url := startGateway(t, bin)
	_, _, err := connectClient(t, bin, url, "not-the-token", nil)
	if err == nil || !strings.Contains(err.Error(), "token refused") {
		t.Errorf("wrong token: got %v, want an error saying the token was refused", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there now
	_, _, err = connectClient(t, bin, down, gatewayToken, nil)
	if err == nil || !strings.Contains(err.Error(), "no gateway at "+down) {
		t.Errorf("gateway down: got %v, want an error saying there is no gateway at %s", err, down)
	}
}

func TestConnectOptions(t *testing.T) {
	e := &env{getenv: func(k string) (string, bool) {
		if k == "MCP_ROUTER_TOKEN" {
			return "from-env", true
		}
		return "", false
	}}
	opts, err := e.bridgeOptions("http://127.0.0.1:8080/mcp", "", []string{"X-Team=search", "X-Empty="})
	if err != nil {
		t.Fatal(err)
	}
	if got := opts.Header.Get("Authorization"); got != "Bearer from-env" {
		t.Errorf("Authorization %q, want the token from MCP_ROUTER_TOKEN", got)
	}
	if opts.Header.Get("X-Team") != "search" || len(opts.Header.Values("X-Empty")) != 1 {
		t.Errorf("headers %v", opts.Header)
	}
	opts, err = e.bridgeOptions("http://127.0.0.1:8080/mcp", "from-flag", nil)
	if err != nil || opts.Header.Get("Authorization") != "Bearer from-flag" {
		t.Errorf("--token: got %v, %v; want it over the environment", opts.Header, err)
	}
	tests := []struct {
		url     string
		headers []string
		want    string
	}{
		{"127.0.0.1:8080/mcp", nil, "not a gateway URL"},
		{"ftp://h/mcp", nil, "not a gateway URL"},
		{"http://h/mcp", []string{"NoEquals"}, "want NAME=VALUE"},
		{"http://h/mcp", []string{"Bad Name=v"}, "want NAME=VALUE"},
		{"http://h/mcp", []string{"X=a\r\nInjected: 1"}, "want NAME=VALUE"},
		{"http://h/mcp", []string{"Authorization=Bearer x"}, "both set"},
	}
	for _, tt := range tests {
		if _, err := e.bridgeOptions(tt.url, "", tt.headers); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %q: got %v, want an error saying %q", tt.url, tt.headers, err, tt.want)
		}
	}
}

// bearer adds the gateway's token to each request of a direct client.
type bearer struct{ next http.RoundTripper }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+gatewayToken)
	return b.next.RoundTrip(r)
}

// BenchmarkConnectCall measures a tool call through connect against the
// same call made over HTTP directly: the bridge's cost per call.
func BenchmarkConnectCall(b *testing.B) {
	bin := buildBinary(b)
	url := startGateway(b, bin)
	direct := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	dcs, err := direct.Connect(b.Context(), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{http.DefaultTransport}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer dcs.Close()
	cmd := exec.Command(bin, "connect", url)
	cmd.Env = isolatedEnv(b.TempDir(), "MCP_ROUTER_TOKEN="+gatewayToken)
	bridged := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	bcs, err := bridged.Connect(b.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer bcs.Close()
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
	}{{"direct", dcs}, {"connect", bcs}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := c.cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "fake_echo", Arguments: map[string]any{"text": "x"}})
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// awaitReady polls url (a gateway's /readyz) until it answers 200.
func awaitReady(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not ready after 30s (last: %v)", url, err)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
