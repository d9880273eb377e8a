package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// scriptedSender answers tools/list requests with pages in turn.
type scriptedSender struct {
	pages []string // results, in order
	ids   []mcp.RequestId
}

func (s *scriptedSender) SendRequest(_ context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	s.ids = append(s.ids, req.ID)
	if len(s.ids) > len(s.pages) {
		return nil, errors.New("no more pages scripted")
	}
	return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: req.ID, Result: json.RawMessage(s.pages[len(s.ids)-1])}, nil
}

func TestRawListingPages(t *testing.T) {
	tool := func(name, schema string) string {
		return `{"name":"` + name + `","inputSchema":` + schema + `}`
	}
	tests := []struct {
		name      string
		pages     []string
		wantTools []string
		wantErr   error
	}{
		{"one page", []string{`{"tools":[` + tool("a", `{"type":"object"}`) + `]}`}, []string{"a"}, nil},
		{"cursors followed", []string{
			`{"tools":[` + tool("a", `{"type":"object"}`) + `],"nextCursor":"c1"}`,
			`{"tools":[` + tool("b", `{"type":"object"}`) + `],"nextCursor":"c2"}`,
			`{"tools":[` + tool("c", `{"type":"object"}`) + `]}`,
		}, []string{"a", "b", "c"}, nil},
		{"a repeated cursor is an error", []string{
			`{"tools":[],"nextCursor":"c1"}`, `{"tools":[],"nextCursor":"c2"}`, `{"tools":[],"nextCursor":"c1"}`,
		}, nil, client.ErrRepeatedListCursor},
		{"a tool whose schema is not an object is left out", []string{
			`{"tools":[` + tool("bad", `["x"]`) + `,` + tool("good", `{"anyOf":[{"type":"object"}]}`) + `,{"name":"bare"}]}`,
		}, []string{"good", "bare"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scriptedSender{pages: tt.pages}
			tools, err := listRawTools(t.Context(), s, Config{}.listBudget("tools/list"), slog.New(slog.DiscardHandler))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got error %v, want %v", err, tt.wantErr)
			}
			var names []string
			for _, x := range tools {
				names = append(names, x.Name)
				if x.InputSchema.Type != "" {
					t.Errorf("%s: typed input schema set alongside the raw one", x.Name)
				}
			}
			if !slices.Equal(names, tt.wantTools) {
				t.Errorf("got tools %q, want %q", names, tt.wantTools)
			}
			for i, id := range s.ids {
				if !strings.HasPrefix(id.String(), "string:mcp-router/tools/list/") || slices.Contains(s.ids[:i], id) {
					t.Errorf("request %d: id %s, want a fresh string id", i, id.String())
				}
			}
		})
	}
}

func (s *scriptedSender) SendNotification(context.Context, mcp.JSONRPCNotification) error { return nil }
