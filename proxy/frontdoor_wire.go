package proxy

import "github.com/mcp-router/mcp-router/proxy/internal/wire"

// The front door (principal.go) reads the head of a message through these
// two names; they stand in for the wire package's ReadHead until the
// front door has a package of its own and calls it directly.

// jsonHead is what the front door reads of a message.
type jsonHead struct {
	top        byte
	id, method []byte
}

// scanJSON reads msg's head; see wire.ReadHead.
func scanJSON(msg []byte) (jsonHead, error) {
	h, err := wire.ReadHead(msg)
	return jsonHead{top: h.Top, id: h.ID, method: h.Method}, err
}

// envelopeOf returns the head scanJSON read, which has checked the
// envelope already.
func envelopeOf(h *jsonHead) (jsonHead, error) { return *h, nil }
