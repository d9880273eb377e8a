package upstream

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// twice is mcp-go's wrapping of a failed POST, which people were shown.
const twice = "failed to send request: failed to send request"

// An HTTP upstream whose server has gone: the error a call gives (as the
// hub shows it) says each cause once, in the cause's own words.
func TestCallToAClosedHTTPUpstreamSaysEachCauseOnce(t *testing.T) {
	s := server.NewMCPServer("gone", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(s))
	u, _ := runSolo(t, Config{Name: "gone", Transport: TransportStreamableHTTP, URL: ts.URL + "/mcp"})
	if st := u.Status(); st.State != StateConnected {
		t.Fatalf("the server did not connect: %s", st.Err)
	}
	ts.Config.Close() // closes the listener and every connection, the open GET stream too
	ts.Close()
	_, err := callErr(t, u, "echo", nil, nil)
	if err == nil {
		t.Fatal("the call succeeded, want it failed")
	}
	shown := u.ForModel(WithoutURL(err)).Error()
	if strings.Contains(shown, twice) || !strings.Contains(shown, "failed to send request: Post") {
		t.Errorf("got %q, want each cause once", shown)
	}
}

// An HTTP upstream nothing listens for: the reason status and doctor
// give says each cause once and keeps the cause's words.
func TestUnreachableHTTPUpstreamStatusSaysEachCauseOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	u, _ := runSolo(t, Config{Name: "nobody", Transport: TransportStreamableHTTP, URL: "http://" + addr + "/mcp"})
	got := u.Status().Err
	if strings.Contains(got, twice) || !strings.Contains(got, "connection refused") {
		t.Errorf("got %q, want each cause once, with the cause", got)
	}
}
