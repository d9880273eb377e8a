package upstream

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// callRequestLine writes, on one line, the request json.Marshal writes
// for mcp-go's: the same JSON value, for every shape of arguments.
func TestCallRequestLineMatchesMarshal(t *testing.T) {
	meta := &mcp.Meta{ProgressToken: "p1", AdditionalFields: map[string]any{"k": "<v&>"}}
	for name, p := range map[string]mcp.CallToolParams{
		"raw arguments":             {Name: "a_b", Arguments: json.RawMessage(`{"a":2,"b":3}`), Meta: meta},
		"raw arguments over lines":  {Name: "a_b", Arguments: json.RawMessage("{\n  \"a\": \"x\\ny\",\r\n  \"b\": [1, 2]\n}")},
		"mcp-go's raw arguments":    {Name: "a_b", RawArguments: json.RawMessage(`{"big":12345678901234567890}`), Arguments: map[string]any{"big": 1.2345678901234567e19}},
		"map arguments":             {Name: "a_b", Arguments: map[string]any{"text": "<&>", "n": 1.5}, Meta: meta},
		"no arguments":              {Name: "a_b"},
		"a name to escape":          {Name: "a\"<b>&\u2028", Arguments: json.RawMessage(`{}`)},
		"a task":                    {Name: "a_b", Arguments: json.RawMessage(`{}`), Task: &mcp.TaskParams{}},
		"a multi-round-trip answer": {Name: "a_b", Arguments: json.RawMessage(`{}`), MultiRoundTripParams: mcp.MultiRoundTripParams{RequestState: "s"}},
	} {
		t.Run(name, func(t *testing.T) {
			const id = "mcp-router/tools/call/7"
			idJSON, _ := json.Marshal(id)
			line, err := callRequestLine(id, idJSON, p)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsAny(line[:len(line)-1], "\r\n") || line[len(line)-1] != '\n' {
				t.Fatalf("not one line: %q", line)
			}
			want, err := json.Marshal(transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Method: string(mcp.MethodToolsCall), Params: p})
			if err != nil {
				t.Fatal(err)
			}
			var got, exp any
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			dec = json.NewDecoder(bytes.NewReader(want))
			dec.UseNumber()
			if err := dec.Decode(&exp); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("got  %s\nwant %s", line, want)
			}
		})
	}
	if _, err := callRequestLine("x", []byte(`"x"`), mcp.CallToolParams{Name: "a", Arguments: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("broken arguments written, want an error as json.Marshal gives")
	}
}
