package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// rpcMessage is what the proxy looks at in a message from an upstream to
// tell a well-formed JSON-RPC 2.0 message from a broken one.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  present         `json:"result"`
	Error   present         `json:"error"`
}

// present records whether a member was there, and whether as null,
// without copying its value (a result can be megabytes).
type present struct{ set, null bool }

func (p *present) UnmarshalJSON(b []byte) error {
	*p = present{set: true, null: string(b) == "null"}
	return nil
}

// errBatch is a JSON array: a batch, which MCP no longer allows.
var errBatch = fmt.Errorf("%w: a JSON-RPC batch", ErrProtocol)

var errNotJSON = fmt.Errorf("%w: not JSON", ErrProtocol)

// parseMessage decodes one message, or says why it is not one.
func parseMessage(data []byte) (rpcMessage, error) {
	var m rpcMessage
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' { // rare: no need to spare a pass
		switch {
		case !json.Valid(data):
			return m, errNotJSON
		case data[0] == '[':
			return m, errBatch
		default:
			return m, fmt.Errorf("%w: not a JSON-RPC message (not an object)", ErrProtocol)
		}
	}
	// Unmarshal checks the whole message is valid JSON before it decodes:
	// one pass more would read every reply, up to the size limit, again.
	if err := json.Unmarshal(data, &m); err != nil {
		if _, syntax := errors.AsType[*json.SyntaxError](err); syntax {
			return m, errNotJSON
		}
		return m, fmt.Errorf("%w: not a JSON-RPC message (%v)", ErrProtocol, err)
	}
	if m.JSONRPC != "2.0" {
		return m, fmt.Errorf("%w: not JSON-RPC 2.0", ErrProtocol)
	}
	if m.isCall() && m.Method[0] != '"' {
		return m, fmt.Errorf("%w: a method that is not a string", ErrProtocol)
	}
	return m, nil
}

// isCall says whether the message is a request or a notification (it has
// a method), not a response.
func (m rpcMessage) isCall() bool { return len(m.Method) > 0 }

// vetResponse checks a response: one of result and error, not both. An
// "error": null is taken for no error, as mcp-go does.
func (m rpcMessage) vetResponse() error {
	result, failure := m.Result.set, m.Error.set && !m.Error.null
	switch {
	case result && failure:
		return fmt.Errorf("%w: a response with both a result and an error", ErrProtocol)
	case !result && !failure:
		return fmt.Errorf("%w: a response with neither a result nor an error", ErrProtocol)
	}
	return nil
}

// idKey is the key mcp-go matches a response to its request by, or ""
// for a missing or null id.
func idKey(raw json.RawMessage) string {
	var id mcp.RequestId
	if len(raw) == 0 || json.Unmarshal(raw, &id) != nil || id.IsNil() {
		return ""
	}
	return id.String()
}

// vetReply checks the message an upstream sent in reply to the request
// with id key want: a well-formed response to that request.
func vetReply(data []byte, want string) error {
	m, err := parseMessage(data)
	if err != nil {
		return err
	}
	if m.isCall() {
		return fmt.Errorf("%w: a request or notification where the response belongs", ErrProtocol)
	}
	return m.vetAnswer(want)
}

// vetAnswer checks a response to the request with id key want.
func (m rpcMessage) vetAnswer(want string) error {
	if got := idKey(m.ID); want != "" && got != want {
		return fmt.Errorf("%w: a response to another request", ErrProtocol)
	}
	return m.vetResponse()
}
