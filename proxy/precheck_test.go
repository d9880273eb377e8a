package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/internal/wire"
)

// FI-12 over stdio: a line over the limit is refused -32600, and the
// session goes on. (TestReadLineLimit has a line of exactly the limit.)
func TestFI12StdioOversizedMessage(t *testing.T) {
	rec := &recorder{}
	c := serveRawStdio(t, newBIServer(t, startRecHub(t, rec)))
	c.initialize(t, `{}`)
	big := toolsCall(t, 1, "rec_echo", map[string]any{"text": strings.Repeat("x", wire.MaxMessageBytes)})
	c.send(t, big)
	m := c.await(t, "null")
	m.wantError(t, mcp.INVALID_REQUEST, "null")
	if !strings.Contains(m.Error.Message, fmt.Sprint(wire.MaxMessageBytes)) {
		t.Errorf("message %q does not name the limit", m.Error.Message)
	}
	if n := rec.count(); n != 0 {
		t.Errorf("the oversized call reached the upstream (%d calls)", n)
	}
	c.sync(t)
}
