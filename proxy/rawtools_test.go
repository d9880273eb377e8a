package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
)

// canonical re-encodes a JSON document with sorted keys and no spacing,
// so that two spellings of one value compare equal; "" for no document.
func canonical(t *testing.T, v any) string {
	t.Helper()
	b, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatalf("encoding %v: %v", v, err)
		}
	}
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// declared is a tool's two schemas as the fake upstream declares them on
// the wire.
func declared(t *testing.T, tool string) (input, output string) {
	t.Helper()
	st := fakeupstream.New("declared").GetTool(tool)
	if st == nil {
		t.Fatalf("the fake upstream has no tool %s", tool)
	}
	b, err := json.Marshal(st.Tool)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	return canonical(t, wire.InputSchema), canonical(t, wire.OutputSchema)
}

// httpFake serves a fake upstream over streamable HTTP.
func httpFake(t *testing.T, name string) UpstreamConfig {
	t.Helper()
	ts := httptest.NewServer(server.NewStreamableHTTPServer(fakeupstream.New(name)))
	t.Cleanup(ts.Close)
	return UpstreamConfig{Name: name, Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp", Prefix: name + "_"}
}

// A gateway must not change a tool's contract: the schemas a client sees
// through the proxy equal, as JSON, what the upstream declares, keywords
// mcp-go's typed schema has no field for (a top-level anyOf, description,
// $ref) included.
func TestUpstreamSchemasPassThroughIntact(t *testing.T) {
	h := startHub(t, stdioFake("sa"), httpFake(t, "ha"), builtinFake("ba"))
	for _, tool := range []string{"find_record", "echo", "rich"} {
		wantIn, wantOut := declared(t, tool)
		if tool == "find_record" && (!strings.Contains(wantIn, `"anyOf"`) || !strings.Contains(wantOut, `"$ref"`)) {
			t.Fatalf("the fake's find_record schemas lack the keywords under test: %s %s", wantIn, wantOut)
		}
		for _, tr := range transports {
			c := tr.connect(t, h)
			res, err := c.session.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, up := range []string{"sa", "ha", "ba"} {
				name := up + "_" + tool
				i := slices.IndexFunc(res.Tools, func(x *sdk.Tool) bool { return x.Name == name })
				if i < 0 {
					t.Errorf("%s client: %s not listed", tr.name, name)
					continue
				}
				if got := canonical(t, res.Tools[i].InputSchema); got != wantIn {
					t.Errorf("%s client: %s inputSchema:\ngot  %s\nwant %s", tr.name, name, got, wantIn)
				}
				if got := canonical(t, res.Tools[i].OutputSchema); got != wantOut {
					t.Errorf("%s client: %s outputSchema:\ngot  %s\nwant %s", tr.name, name, got, wantOut)
				}
			}
		}
	}
}

// listSeen records what reaches an HTTP upstream with each tools/list
// request: its id and the session and protocol-version headers.
type listSeen struct {
	mu   sync.Mutex
	reqs []listRequest
}

type listRequest struct {
	id               json.RawMessage
	session, version string
}

func (l *listSeen) all() []listRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// recordedHTTPFake serves a fake upstream over streamable HTTP behind a
// handler that records every tools/list request.
func recordedHTTPFake(t *testing.T, name string) (UpstreamConfig, *listSeen) {
	t.Helper()
	seen := &listSeen{}
	up := tappedHTTPFake(t, name, func(body []byte, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == string(mcp.MethodToolsList) {
			seen.mu.Lock()
			seen.reqs = append(seen.reqs, listRequest{msg.ID, r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Protocol-Version")})
			seen.mu.Unlock()
		}
	})
	return up, seen
}

// Listing through the transport keeps what mcp-go's own requests carry
// over HTTP: the session id and the negotiated protocol version; the
// request id is a string of ours, which the reply guard accepts. A
// list_changed re-lists the same way.
func TestRawListingOverHTTPKeepsSessionAndVersion(t *testing.T) {
	up, seen := recordedHTTPFake(t, "ha")
	h := startHub(t, up)
	callText(t, h, "ha_add_tool", map[string]any{"name": "later"})
	eventually(t, 5*time.Second, "ha_later listed", func() bool { _, ok := h.Catalog().Tool("ha_later"); return ok })
	reqs := seen.all()
	if len(reqs) < 2 {
		t.Fatalf("got %d tools/list requests, want the first listing and the re-listing", len(reqs))
	}
	for i, r := range reqs {
		var id string
		if json.Unmarshal(r.id, &id) != nil || !strings.HasPrefix(id, "mcp-router/tools/list/") {
			t.Errorf("request %d: id %s, want a string id of the router's", i, r.id)
		}
		if r.session == "" || r.session != reqs[0].session {
			t.Errorf("request %d: Mcp-Session-Id %q, want the session's (%q)", i, r.session, reqs[0].session)
		}
		if r.version != upstream.DefaultProtocolVersion {
			t.Errorf("request %d: Mcp-Protocol-Version %q, want %q", i, r.version, upstream.DefaultProtocolVersion)
		}
	}
}

// Argument checks see the whole schema: a top-level anyOf is enforced.
func TestArgumentCheckEnforcesTopLevelAnyOf(t *testing.T) {
	strict, log := loggedHTTPFake(t, "strict")
	strict.ValidateArguments = true
	stdio := stdioFake("sa")
	stdio.ValidateArguments = true
	h := startHub(t, strict, stdio)
	c := overStdio(t, h)
	for _, up := range []string{"strict", "sa"} {
		tool := up + "_find_record"
		wantRefused(t, c.call(t, tool, map[string]any{}), tool, up, "anyOf")
		if res := c.call(t, tool, map[string]any{"handle": "@lin"}); res.IsError || resultText(res) != "@lin" {
			t.Errorf("%s with a handle: got %q (isError %v), want @lin", tool, resultText(res), res.IsError)
		}
	}
	if got := log.of("find_record"); len(got) != 1 || got[0] != `{"handle":"@lin"}` {
		t.Errorf("the upstream got find_record calls %q, want only the valid one", got)
	}
}

// pagedTools serves n tools, two per tools/list page, each with a
// top-level oneOf in its input schema.
func pagedTools(n int) *server.MCPServer {
	srv := server.NewMCPServer("paged", "1.0.0", server.WithToolCapabilities(true), server.WithPaginationLimit(2))
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		schema := fmt.Sprintf(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},`+
			`"oneOf":[{"required":["a"]},{"required":["b"]}],"description":"tool %d"}`, i)
		srv.AddTool(mcp.NewToolWithRawSchema(name, "Paged tool "+name, json.RawMessage(schema)),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(name), nil
			})
	}
	return srv
}

// Every page of a paginated listing is followed, each tool's schema kept.
func TestRawListingFollowsPages(t *testing.T) {
	h := startHubWith(t, Options{
		Upstreams: []UpstreamConfig{{Name: "paged", Transport: TransportBuiltin, Builtin: "paged", Prefix: "p_"}},
		Builtin:   func(string, []string) (*server.MCPServer, error) { return pagedTools(5), nil },
	})
	for i := range 5 {
		name := fmt.Sprintf("p_t%d", i)
		tool, ok := h.Catalog().Tool(name)
		if !ok {
			t.Errorf("%s not listed", name)
			continue
		}
		if want := fmt.Sprintf(`"description":"tool %d"`, i); !strings.Contains(string(tool.Def.RawInputSchema), `"oneOf"`) ||
			!strings.Contains(string(tool.Def.RawInputSchema), want) {
			t.Errorf("%s inputSchema: got %s, want its oneOf and %s", name, tool.Def.RawInputSchema, want)
		}
	}
}
