package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// calculator is an in-process MCP server with one tool, add.
func calculator(string, []string) (*server.MCPServer, error) {
	s := server.NewMCPServer("calculator", "1")
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Add two numbers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(req.GetFloat("a", 0) + req.GetFloat("b", 0))), nil
		})
	return s, nil
}

// calcOptions are a hub's options with one upstream, calc: the
// calculator, built in (served in-process), its tools named calc_*.
func calcOptions() proxy.Options {
	return proxy.Options{
		Upstreams: []proxy.UpstreamConfig{{Name: "calc", Prefix: "calc_", Transport: proxy.TransportBuiltin, Builtin: "calculator"}},
		Builtin:   calculator,
		Reserved:  proxy.ReservedNames(),
	}
}

// A hub connects to its upstreams and calls their tools under namespaced
// names. This one has a single built-in upstream, served in-process.
func ExampleHub() {
	ctx := context.Background()
	h := proxy.NewHub(calcOptions())
	if err := h.Start(ctx); err != nil {
		fmt.Println("start:", err)
		return
	}
	defer h.Close()
	for _, t := range h.Catalog().Tools {
		fmt.Printf("%s (%s's %s)\n", t.Name, t.Upstream, t.Original)
	}
	res, err := h.CallTool(ctx, "calc_add", map[string]any{"a": 2, "b": 3}, nil)
	if err != nil {
		fmt.Println("call:", err)
		return
	}
	fmt.Println("calc_add(2, 3) =", res.Content[0].(mcp.TextContent).Text)
	// Output:
	// calc_add (calc's add)
	// calc_add(2, 3) = 5
}

// A server faces one client over stdio: here a client that initializes
// and lists the tools, which are the hub's tools and the gateway's own.
func ExampleServer_ServeStdio() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := proxy.NewHub(calcOptions())
	if err := h.Start(ctx); err != nil {
		fmt.Println("start:", err)
		return
	}
	defer h.Close()
	srv := proxy.NewServer(proxy.ServerOptions{Hub: h})
	defer srv.Close()

	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := srv.ServeStdio(ctx, toServer, fromServer)
		fromServer.Close() // the client reads to the end
		served <- err
	}()
	replies := bufio.NewScanner(clientIn)
	// reply sends one request and reads lines up to its answer.
	reply := func(id int, method, params string) json.RawMessage {
		fmt.Fprintf(clientOut, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		for replies.Scan() {
			var m struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(replies.Bytes(), &m) == nil && m.ID == id {
				return m.Result
			}
		}
		return nil
	}
	reply(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}`)
	fmt.Fprintln(clientOut, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var list struct{ Tools []struct{ Name string } }
	_ = json.Unmarshal(reply(2, "tools/list", `{}`), &list)
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	fmt.Println(strings.Join(names, ", "))

	clientOut.Close()    // the client goes away: ServeStdio returns
	for replies.Scan() { // what the server still writes, up to its end
	}
	fmt.Println("served:", <-served)
	// Output:
	// calc_add, call_tool, read_result, run_plan
	// served: <nil>
}

// A server faces any number of clients over streamable HTTP at /mcp:
// here behind the front door (the Host and Origin checks, the body
// limit, and bearer tokens when configured), on a test listener, with an
// mcp-go client that lists the tools and calls one.
func ExampleServer_HTTPHandler() {
	ctx := context.Background()
	h := proxy.NewHub(calcOptions())
	if err := h.Start(ctx); err != nil {
		fmt.Println("start:", err)
		return
	}
	defer h.Close()
	srv := proxy.NewServer(proxy.ServerOptions{Hub: h})
	defer srv.Close()
	ts := httptest.NewServer(frontdoor.Guard(srv.HTTPHandler(), frontdoor.Options{}))
	defer ts.Close()

	c, err := client.NewStreamableHttpClient(ts.URL + "/mcp")
	if err != nil {
		fmt.Println("client:", err)
		return
	}
	defer c.Close()
	hello := mcp.InitializeRequest{}
	hello.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	hello.Params.ClientInfo = mcp.Implementation{Name: "example", Version: "1"}
	if _, err := c.Initialize(ctx, hello); err != nil {
		fmt.Println("initialize:", err)
		return
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		fmt.Println("tools/list:", err)
		return
	}
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	fmt.Println(strings.Join(names, ", "))
	call := mcp.CallToolRequest{}
	call.Params.Name = "calc_add"
	call.Params.Arguments = map[string]any{"a": 2, "b": 3}
	res, err := c.CallTool(ctx, call)
	if err != nil {
		fmt.Println("tools/call:", err)
		return
	}
	fmt.Println("calc_add(2, 3) =", res.Content[0].(mcp.TextContent).Text)
	// Output:
	// calc_add, call_tool, read_result, run_plan
	// calc_add(2, 3) = 5
}
