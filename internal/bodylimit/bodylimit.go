// Package bodylimit bounds the HTTP response bodies a client reads: the
// gateway's clients of Ollama and of authorization servers, whose
// libraries read a reply whole. It sits under an http.Client, between the
// library and the network.
package bodylimit

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrTooLarge is the read error of a body past its limit.
var ErrTooLarge = errors.New("response body too large")

// Transport is an http.RoundTripper whose response bodies fail with
// ErrTooLarge past Max bytes.
type Transport struct {
	Next http.RoundTripper // nil means http.DefaultTransport
	Max  int64
}

// Client returns an http.Client whose response bodies fail past max bytes.
func Client(max int64) *http.Client { return &http.Client{Transport: &Transport{Max: max}} }

// RoundTrip sends req and bounds the response's body.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &body{ReadCloser: resp.Body, left: t.Max, max: t.Max}
	return resp, nil
}

type body struct {
	io.ReadCloser
	left, max int64
}

func (b *body) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fmt.Errorf("%w: over %d bytes", ErrTooLarge, b.max)
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return n + int(b.left), fmt.Errorf("%w: over %d bytes", ErrTooLarge, b.max)
	}
	return n, err
}
