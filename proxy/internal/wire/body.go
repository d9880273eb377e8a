package wire

import (
	"bytes"
	"io"
)

// Body is a request body held in memory (Guard reads it whole within its
// bounds): a handler further on takes its bytes with BodyBytes rather
// than read and copy them again.
type Body struct {
	bytes.Reader
	b      []byte
	method []byte // the method member PrecheckHTTP read, as written; nil: none
}

// NewBody returns b as a request body.
func NewBody(b []byte) *Body {
	body := &Body{b: b}
	body.Reset(b)
	return body
}

// Close does nothing: there is nothing to release.
func (*Body) Close() error { return nil }

// Reopen is b again from its start, for http.Request.GetBody.
func (b *Body) Reopen() (io.ReadCloser, error) { return NewBody(b.b), nil }

// Is reports whether PrecheckHTTP read b's message with the method name.
func (b *Body) Is(name string) bool { return b.method != nil && methodIs(b.method, name) }

// BodyBytes returns the bytes of body when it is a Body not read from
// yet, without copying them; false for any other body.
func BodyBytes(body io.Reader) ([]byte, bool) {
	b, ok := body.(*Body)
	if !ok || b.Len() != len(b.b) {
		return nil, false
	}
	return b.b, true
}
