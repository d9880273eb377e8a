package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawStdio is a client that speaks raw JSON-RPC lines to ServeStdio.
type rawStdio struct {
	in    *io.PipeWriter
	lines chan []byte
}

func serveRawStdio(t *testing.T, srv *Server) *rawStdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &rawStdio{in: inW, lines: make(chan []byte, 64)}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	stop := make(chan struct{})
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			select {
			case c.lines <- bytes.Clone(sc.Bytes()):
			case <-stop:
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		inW.Close()
		<-served
		cancel()
		outR.Close()
		<-read
	})
	return c
}

func (c *rawStdio) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatalf("writing %.80q: %v", line, err)
	}
}

// next returns the next line the server wrote, or nil after d.
func (c *rawStdio) next(d time.Duration) []byte {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case l := <-c.lines:
		return l
	case <-timer.C:
		return nil
	}
}

func TestBIExplore(t *testing.T) {
	srv := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha"))})
	t.Cleanup(srv.Close)
	c := serveRawStdio(t, srv)
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{not json`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"id":2,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"method":5}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":["alpha_echo"]}`,
		`{"jsonrpc":"2.0","id":6,"method":"nope/nope"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha_nope","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"alpha_nope"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"garbage"}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"alpha_sleep","arguments":{"ms":300}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"dup"}}}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"alpha_sample","arguments":{"prompt":"hi"}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha_echo\",\"arguments\":{\"text\":\"a\xffb\\u0000c\\ud800d\"}}}",
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"alpha_echo","arguments":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`,
		`{"jsonrpc":"2.0","id":13,"method":"ping"}`,
	} {
		c.send(t, l)
		c.send(t, `{"jsonrpc":"2.0","id":"sync","method":"ping"}`)
		fmt.Printf(">>> %.100s\n", l)
		for {
			r := c.next(2 * time.Second)
			if r == nil {
				fmt.Println("   (timeout)")
				break
			}
			fmt.Printf("   %.300s\n", r)
			if bytes.Contains(r, []byte(`"sync"`)) {
				break
			}
		}
	}
	_ = httptest.NewServer
	_ = json.Valid
}

func TestBIExploreHTTP(t *testing.T) {
	srv := NewServer(ServerOptions{Hub: startHub(t, builtinFake("alpha"))})
	ts := httptest.NewServer(Guard(srv.HTTPHandler(), GuardOptions{}))
	t.Cleanup(func() { srv.Close(); ts.Close() })
	g := &guarded{URL: ts.URL + "/mcp", client: ts.Client()}
	show := func(what string, r guardReply) {
		fmt.Printf(">>> %s\n   %d %s %.300s\n", what, r.status, r.header.Get("Content-Type"), r.body)
	}
	show("pre-init call", g.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"x"}}}`, nil))
	show("pre-init ping", g.post(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil))
	show("invalid json no session", g.post(t, `{not json`, nil))
	sid := g.initialize(t, nil)
	h := inSession(sid)
	show("invalid json", g.post(t, `{not json`, h))
	show("batch", g.post(t, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, h))
	show("id null", g.post(t, `{"jsonrpc":"2.0","id":null,"method":"ping"}`, h))
	show("no jsonrpc", g.post(t, `{"id":2,"method":"ping"}`, h))
	show("method 5", g.post(t, `{"jsonrpc":"2.0","id":4,"method":5}`, h))
	show("unknown method", g.post(t, `{"jsonrpc":"2.0","id":6,"method":"nope/nope"}`, h))
	show("nested", g.post(t, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"alpha_echo","arguments":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+`}}`, h))
	show("nested 9000", g.post(t, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"x","deep":`+strings.Repeat("[", 9000)+strings.Repeat("]", 9000)+`}}}`, h))
	show("malformed cancel", g.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":"garbage"}`, h))
	show("unknown cancel", g.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`, h))
	r := g.post(t, initializeBody, h)
	fmt.Println(">>> init again", r.status, r.header.Get("Mcp-Session-Id"), sid, len(r.body), strings.Contains(string(r.body), "protocolVersion"))
	show("old session still", g.post(t, toolsListBody, h))
	show("progress", g.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha_progress","arguments":{"steps":3},"_meta":{"progressToken":"p"}}}`, h))
	show("utf8", g.post(t, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"alpha_echo\",\"arguments\":{\"text\":\"a\xffb\\u0000c\\ud800d\"}}}", h))
}

func TestBIExploreSampling(t *testing.T) {
	up := stdioFake("alpha")
	up.Timeout = 2 * time.Second
	srv := NewServer(ServerOptions{Hub: startHub(t, up)})
	t.Cleanup(srv.Close)
	c := serveRawStdio(t, srv)
	c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(t, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"alpha_sample","arguments":{"prompt":"hi"}}}`)
	start := time.Now()
	for {
		l := c.next(4 * time.Second)
		if l == nil {
			break
		}
		fmt.Printf("%s %.300s\n", time.Since(start), l)
	}
}

func TestBIExploreBuiltinProgress(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	_, err := h.CallTool(t.Context(), "alpha_progress", map[string]any{"steps": 3}, func(p Progress) { fmt.Printf("%+v\n", p) })
	fmt.Println(err)
}
