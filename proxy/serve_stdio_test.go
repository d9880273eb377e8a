package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// A handler that panics gets its request an INTERNAL_ERROR reply with its
// id, on the call workers and on the other requests' goroutines alike; the
// connection goes on, and a panicked call's id is free again.
func TestStdioPanicAnswersInternalError(t *testing.T) {
	srv := newBIServer(t, startRecHub(t, &recorder{}))
	srv.mcp.AddTool(mcp.NewTool("boom"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("tool boom")
	})
	srv.mcp.AddPrompt(mcp.NewPrompt("boom"), func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		panic("prompt boom")
	})
	c := serveRawStdio(t, srv)
	c.initialize(t, `{}`)
	for range 2 { // the same id twice: the first call's end freed it
		m := c.callTool(t, 7, "boom", map[string]any{})
		m.wantError(t, mcp.INTERNAL_ERROR, "7")
		if !strings.Contains(m.Error.Message, "tool boom") {
			t.Errorf("got message %q, want it to say what panicked", m.Error.Message)
		}
	}
	c.send(t, `{"jsonrpc":"2.0","id":"p","method":"prompts/get","params":{"name":"boom"}}`)
	c.await(t, `"p"`).wantError(t, mcp.INTERNAL_ERROR, `"p"`)
	if other := c.sync(t); len(other) != 0 {
		t.Errorf("unexpected messages: %v", other)
	}
}

// The proxy's requests to a stdio client carry ids of its own, and each
// reply reaches the request with its id, whatever order they come in; a
// reply with an id no request awaits is dropped unanswered, and an error
// reply fails its request.
func TestStdioClientRepliesMatchedByID(t *testing.T) {
	srv := newBIServer(t, startRecHub(t, &recorder{}))
	srv.mcp.AddTool(mcp.NewTool("ask", mcp.WithString("tag")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithSampling)
		if !ok {
			return nil, errors.New("the session cannot sample")
		}
		res, err := cs.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("tag", ""))}},
			MaxTokens: 10,
		}})
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		text, _ := res.Content.(mcp.TextContent)
		return mcp.NewToolResultText(text.Text), nil
	})
	c := serveRawStdio(t, srv)
	c.initialize(t, `{"sampling":{}}`)
	tags := []string{"first", "second", "refused"}
	for i, tag := range tags {
		c.send(t, toolsCall(t, i+1, "ask", map[string]any{"tag": tag}))
	}
	asked := map[string]json.RawMessage{} // tag -> the id the proxy asked with
	deadline := time.NewTimer(replyWait)
	defer deadline.Stop()
	for len(asked) < len(tags) {
		m := c.recv(t, deadline.C)
		if m.Method != string(mcp.MethodSamplingCreateMessage) {
			c.stash = append(c.stash, m)
			continue
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(m.Params, &p); err != nil || len(p.Messages) != 1 {
			t.Fatalf("sampling request %s: %v", m.raw, err)
		}
		text, _ := p.Messages[0].Content.(map[string]any)
		asked[fmt.Sprint(text["text"])] = m.ID
	}
	if string(asked["first"]) == string(asked["second"]) {
		t.Fatalf("two requests to the client share id %s", asked["first"])
	}
	c.send(t, `{"jsonrpc":"2.0","id":987654,"result":{"role":"assistant","content":{"type":"text","text":"stray"},"model":"m"}}`)
	c.send(t, `{"jsonrpc":"2.0","id":"`+string(asked["first"])+`","result":{"role":"assistant","content":{"type":"text","text":"stray"},"model":"m"}}`)
	c.send(t, `{"jsonrpc":"2.0","id":`+string(asked["refused"])+`,"error":{"code":-1,"message":"the user said no"}}`)
	for _, tag := range []string{"second", "first"} {
		c.send(t, `{"jsonrpc":"2.0","id":`+string(asked[tag])+`,"result":{"role":"assistant","content":{"type":"text","text":"re: `+tag+`"},"model":"m"}}`)
	}
	for i, tag := range tags[:2] {
		if got, want := c.await(t, fmt.Sprint(i+1)).tool(t).text(), "re: "+tag; got != want {
			t.Errorf("call %d: got %q, want %q", i+1, got, want)
		}
	}
	if r := c.await(t, "3").tool(t); !r.IsError || !strings.Contains(r.text(), "the user said no") {
		t.Errorf("call 3: got %+v, want an error result saying what the client said", r)
	}
	if other := c.sync(t); len(other) != 0 {
		t.Errorf("unexpected messages (a stray reply answered?): %v", other)
	}
}

// When the input ends, the requests in flight are cancelled, and
// ServeStdio returns once their handlers have.
func TestStdioInputEndCancelsRequests(t *testing.T) {
	srv := newBIServer(t, startRecHub(t, &recorder{}))
	started, ended := make(chan struct{}), make(chan error, 1)
	srv.mcp.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	})
	c := serveRawStdio(t, srv)
	c.initialize(t, `{}`)
	c.send(t, toolsCall(t, 1, "wait", map[string]any{}))
	<-started
	c.in.Close()
	for range c.lines { // closed once ServeStdio returned
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the handler's context ended with %v, want context.Canceled", err)
		}
	default:
		t.Error("ServeStdio returned before the handler in flight did")
	}
}

// When ctx ends while the reader waits for a line on a pipe, ServeStdio
// returns, and its reader with it: the pipe's read deadline wakes it.
func TestStdioContextEndStopsReader(t *testing.T) {
	srv := newBIServer(t, startRecHub(t, &recorder{}))
	before := goleak.IgnoreCurrent()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	defer inR.Close()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- srv.ServeStdio(ctx, inR, outW) }()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	reply, err := bufio.NewReader(outR).ReadString('\n') // the reader waits for the next line now
	if err != nil || !strings.Contains(reply, `"result"`) {
		t.Fatalf("ping: got %q, %v", reply, err)
	}
	outR.Close()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	goleak.VerifyNone(t, before)
}

// A stdio client's requests other than tools/call run at once up to
// MaxStdioRequests, and past it the next line waits for one to end: all
// are answered. Each request waits until MaxStdioRequests have begun (or
// a bound that only a failing test meets), then works 20 ms.
func TestStdioOtherRequestsBounded(t *testing.T) {
	srv := newBIServer(t, startRecHub(t, &recorder{}))
	var inflight, most, started atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	srv.mcp.AddPrompt(mcp.NewPrompt("hold"), func(ctx context.Context, _ mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if started.Add(1) >= MaxStdioRequests {
			once.Do(func() { close(all) })
		}
		bound := time.NewTimer(replyWait)
		defer bound.Stop()
		select {
		case <-all:
		case <-bound.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		work := time.NewTimer(20 * time.Millisecond)
		defer work.Stop()
		select {
		case <-work.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return mcp.NewGetPromptResult("held", nil), nil
	})
	c := serveRawStdio(t, srv)
	c.initialize(t, `{}`)
	const requests = MaxStdioRequests + 10
	for i := range requests {
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"hold"}}`, i))
	}
	for i := range requests {
		if m := c.await(t, fmt.Sprint(i)); m.Error != nil {
			t.Fatalf("request %d: %s", i, m.raw)
		}
	}
	if got := most.Load(); got != MaxStdioRequests {
		t.Errorf("requests in progress at once: got %d, want %d", got, MaxStdioRequests)
	}
}

// A stdio client's call past its running calls and StdioQueue waiting
// ones is refused at once with a queue_full result, and the reader reads
// on: here the refused call would ask the client for sampling, and
// served on the reader it would wait for a reply the reader never reads,
// so a ping sent after it would go unanswered while the calls hold.
func TestStdioFullQueueRefusesCalls(t *testing.T) {
	srv := newBIServer(t, startRecHub(t, &recorder{}))
	release := make(chan struct{})
	var held atomic.Int64
	srv.mcp.AddTool(mcp.NewTool("hold"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		held.Add(1)
		select {
		case <-release:
			return mcp.NewToolResultText("held"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	srv.mcp.AddTool(mcp.NewTool("ask"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithSampling)
		if !ok {
			return nil, errors.New("the session cannot sample")
		}
		ctx, cancel := context.WithTimeout(ctx, replyWait) // so that a failing test ends
		defer cancel()
		if _, err := cs.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
			Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("hi")}}, MaxTokens: 10,
		}}); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText("asked"), nil
	})
	c := serveRawStdio(t, srv)
	c.initialize(t, `{"sampling":{}}`)
	holds := srv.stdioCalls + StdioQueue
	for i := range holds {
		c.send(t, toolsCall(t, i+1, "hold", map[string]any{}))
	}
	c.send(t, toolsCall(t, holds+1, "ask", map[string]any{}))
	c.send(t, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	deadline := time.NewTimer(replyWait)
	defer deadline.Stop()
	var refused, pong bool
	for !refused || !pong {
		m := c.recv(t, deadline.C)
		switch {
		case m.Method != "":
			t.Fatalf("the refused call was served: %s", m.raw)
		case string(m.ID) == `"ping"`:
			pong = true
		case string(m.ID) == fmt.Sprint(holds+1):
			r := m.tool(t)
			if !r.IsError || !strings.Contains(string(m.raw), `"kind":"queue_full"`) || !strings.Contains(r.text(), "calling ask") {
				t.Errorf("got %s, want a queue_full error result naming the tool", m.raw)
			}
			refused = true
		default:
			t.Fatalf("unexpected reply while the calls hold: %s", m.raw)
		}
	}
	for held.Load() < int64(srv.stdioCalls) { // the workers take the first calls; a failing test meets the deadline
		select {
		case <-deadline.C:
			t.Fatalf("calls running: got %d, want %d", held.Load(), srv.stdioCalls)
		case <-time.After(time.Millisecond):
		}
	}
	close(release)
	for i := range holds {
		if r := c.await(t, fmt.Sprint(i+1)).tool(t); r.IsError {
			t.Errorf("call %d: got an error result %q", i+1, r.text())
		}
	}
}

// BenchmarkStdioLoop measures a tools/call of a tool that does nothing,
// one at a time, served over in-memory stdio pipes to an mcp-go client:
// the stdio loop's own cost per call (read, pre-check, admission,
// dispatch, mcp-go's handling, the reply's encoding and write), without
// an upstream.
func BenchmarkStdioLoop(b *testing.B) {
	srv := NewServer(ServerOptions{Hub: startHub(b, builtinFake("alpha"))})
	b.Cleanup(srv.Close)
	srv.mcp.AddTool(mcp.NewTool("noop"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	ctx, c := stdioPipeClient(b, srv)
	req := mcp.CallToolRequest{}
	req.Params.Name = "noop"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// A stdio client's notifications/cancelled reaches a tools/call of a
// catalog tool that the gateway answers on its own path (fastCall): the
// upstream sees the call cancelled, and the connection serves the next
// call under a fresh id.
func TestStdioFastCallCancelledByClient(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	c := overStdio(t, h)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	called := make(chan error, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "alpha_hang"}
		params.SetProgressToken("hang-1") // the upstream says when the call has arrived
		_, err := c.session.CallTool(ctx, params)
		called <- err
	}()
	eventually(t, 5*time.Second, "the call to reach the upstream", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.progress) == 1
	})
	cancel() // the client sends notifications/cancelled
	if err := <-called; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call returned %v, want context.Canceled", err)
	}
	eventually(t, 5*time.Second, "the upstream to see the cancellation", func() bool {
		return callText(t, h, "alpha_cancellations", nil) == "1"
	})
	if got := resultText(c.call(t, "alpha_echo", map[string]any{"text": "next"})); got != "next" {
		t.Errorf("the call after the cancellation: got %q, want next", got)
	}
}
