package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// rpcMessage is what tells a well-formed upstream message from a broken one.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  present         `json:"result"`
	Error   present         `json:"error"`
}

// present records whether a member was there, and as null, without
// copying it (a result can be megabytes).
type present struct{ set, null bool }

func (p *present) UnmarshalJSON(b []byte) error {
	*p = present{set: true, null: string(b) == "null"}
	return nil
}

// errBatch is a JSON array: a batch, which MCP no longer allows.
var errBatch = fmt.Errorf("%w: a JSON-RPC batch", ErrProtocol)

var errNotJSON = fmt.Errorf("%w: not JSON", ErrProtocol)

// parseMessage decodes one message, or says why it is not one. Plainly
// written messages take the allocation-free scanner; anything else is
// decoded by encoding/json, as mcp-go decodes it.
func parseMessage(data []byte) (rpcMessage, error) {
	if m, ok := parseMessageFast(data); ok {
		return m, nil
	}
	return parseMessageSlow(data)
}

// parseMessageFast is the scanner's pass; false when encoding/json must read.
func parseMessageFast(data []byte) (rpcMessage, bool) {
	sc, err := scanJSON(data)
	if err != nil || sc.top != '{' || sc.escaped {
		return rpcMessage{}, false
	}
	env, err := envelopeOf(&sc)
	if err != nil || string(env.jsonrpc) != `"2.0"` || (env.method != nil && env.method[0] != '"') {
		return rpcMessage{}, false
	}
	m := rpcMessage{JSONRPC: mcp.JSONRPC_VERSION, ID: env.id, Method: env.method}
	if env.result != nil {
		m.Result = present{set: true, null: string(env.result) == "null"}
	}
	if env.error != nil {
		m.Error = present{set: true, null: string(env.error) == "null"}
	}
	return m, true
}

// parseMessageSlow is parseMessage by encoding/json.
func parseMessageSlow(data []byte) (rpcMessage, error) {
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
	// Unmarshal validates before it decodes: no extra pass needed.
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

// isCall says whether the message has a method (not a response).
func (m rpcMessage) isCall() bool { return len(m.Method) > 0 }

// vetResponse checks a response has one of result and error; "error": null
// is no error, as for mcp-go.
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

// idKey is the key mcp-go matches a response to its request by ("" for a
// missing or null id); the ids mcp-go writes are keyed without decoding.
func idKey(raw json.RawMessage) string {
	switch {
	case len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && plainString(raw[1:len(raw)-1]):
		return "string:" + string(raw[1:len(raw)-1])
	case plainInt(raw):
		return "int64:" + string(raw)
	}
	return idKeySlow(raw)
}

// plainString reports whether a string token's inside decodes to itself
// (no quote, escape, control or non-ASCII byte).
func plainString(b []byte) bool {
	for _, c := range b {
		if !plainInString[c] || c >= 0x80 {
			return false
		}
	}
	return true
}

// plainInt reports whether b is an integer token float64 holds exactly and
// that reads back as written (at most 15 digits, no leading zero or -0).
func plainInt(b []byte) bool {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || digits[0] == '0' && (len(digits) > 1 || len(b) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// idKeySlow is idKey by mcp-go's own decoding.
func idKeySlow(raw json.RawMessage) string {
	var id mcp.RequestId
	if len(raw) == 0 || json.Unmarshal(raw, &id) != nil || id.IsNil() {
		return ""
	}
	return id.String()
}

// vetReply checks data is a well-formed response to the request keyed want.
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
