package approval

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// MaxMessageBytes bounds the message of the question the person reads.
const MaxMessageBytes = 4000

// The words around what a question asks; maxWhat is the room they leave.
const (
	askPrefix = "mcp-router asks your approval to "
	askSuffix = ". Set approve and accept to let it go on; decline to stop it."
	maxWhat   = MaxMessageBytes - len(askPrefix) - len(askSuffix)
)

// Field is the approval form's one boolean.
const Field = "approve"

// Question asks the person to approve what, with one boolean, not
// required, so that a form sent back unset is a decline, not an error.
func Question(what string) mcp.ElicitationRequest {
	req := mcp.ElicitationRequest{}
	req.Params.Message = clip(askPrefix+what+askSuffix, MaxMessageBytes)
	req.Params.RequestedSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			Field: map[string]any{"type": "boolean", "title": "Approve", "description": "Let this go on", "default": false},
		},
	}
	return req
}

// approves tells that a form's content sets approve to true.
func approves(content any) bool {
	switch v := content.(type) {
	case map[string]any:
		b, ok := v[Field].(bool)
		return ok && b
	case json.RawMessage:
		var m map[string]any
		return json.Unmarshal(v, &m) == nil && approves(m)
	}
	b, err := json.Marshal(content)
	if err != nil {
		return false
	}
	var m map[string]any
	return json.Unmarshal(b, &m) == nil && m != nil && approves(m)
}
