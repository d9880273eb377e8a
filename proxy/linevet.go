package proxy

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// The stdio checks (FI-09): mcp-go skips a line it cannot decode without
// a word, takes a response with both a result and an error for an error,
// and never answers the request of a response sent in a batch, which then
// waits for its timeout. lineVet sits between the child's stdout and
// mcp-go: a line that breaks JSON-RPC 2.0 is held back, logged and
// counted, and the request it answers, if any, fails at once with
// upstream_protocol_error. stdinTap tells it which requests are waiting.

// protocolMarker starts the message of the error response lineVet puts in
// place of a broken one, so that the call can tell it from an error the
// upstream sent. It is random per process, so no upstream can forge it.
var protocolMarker = "mcp-router:" + rand.Text() + ": "

// protocolReply returns the protocol error a lineVet put in place of the
// reply err came from, or nil.
func protocolReply(err error) error {
	if err == nil {
		return nil
	}
	why, ok := strings.CutPrefix(err.Error(), protocolMarker)
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrProtocol, why)
}

// pendingIDs are the ids of the requests sent to an upstream and not yet
// answered or cancelled, by idKey.
type pendingIDs struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (p *pendingIDs) add(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = make(map[string]bool)
	}
	p.ids[key] = true
}

// empty reports whether no request waits for an answer or for its
// cancellation to be written.
func (p *pendingIDs) empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids) == 0
}

// take removes key and says whether it was waiting.
func (p *pendingIDs) take(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ok := p.ids[key]
	delete(p.ids, key)
	return ok
}

// stdinTap notes the requests mcp-go writes to a child and the ones it
// cancels. mcp-go writes one whole message, newline-terminated, per Write.
type stdinTap struct {
	w       io.WriteCloser
	pending *pendingIDs
}

func (t stdinTap) Write(p []byte) (int, error) {
	var cancelled []string
	for line := range bytes.Lines(p) {
		if key := t.note(line); key != "" {
			cancelled = append(cancelled, key)
		}
	}
	n, err := t.w.Write(p)
	for _, key := range cancelled { // once written: see pendingIDs.empty
		t.pending.take(key) // a late answer is then dropped
	}
	return n, err
}

func (t stdinTap) Close() error { return t.w.Close() }

// note records a request's id, and returns the id a cancellation names.
func (t stdinTap) note(line []byte) (cancelled string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method == "" {
		return ""
	}
	if key := idKey(m.ID); key != "" {
		t.pending.add(key)
	} else if m.Method == "notifications/cancelled" {
		return idKey(m.Params.RequestID)
	}
	return ""
}

// lineVet passes the lines of r on once checked.
type lineVet struct {
	r       *bufio.Reader
	pending *pendingIDs
	// report logs and counts one broken line; it must not block.
	report func(err error, size int)
	// dropped logs a response to no request of ours (late, or made up).
	dropped func(size int)
	out     []byte // checked, not yet read
	err     error
}

func newLineVet(r io.Reader, pending *pendingIDs, report func(error, int), dropped func(int)) *lineVet {
	return &lineVet{r: bufio.NewReader(r), pending: pending, report: report, dropped: dropped}
}

// Read hands on checked lines. A last line the stream ends inside is
// dropped, as mcp-go would drop it.
func (v *lineVet) Read(p []byte) (int, error) {
	for len(v.out) == 0 && v.err == nil {
		line, err := v.r.ReadBytes('\n')
		if err != nil {
			v.err = err
			break
		}
		v.out = v.vet(line)
	}
	if len(v.out) > 0 {
		n := copy(p, v.out)
		v.out = v.out[n:]
		return n, nil
	}
	return 0, v.err
}

// vet returns what to hand on for one line: the line itself, nothing, or
// error responses in place of broken responses to waiting requests.
func (v *lineVet) vet(line []byte) []byte {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	m, err := parseMessage(line)
	switch {
	case errors.Is(err, errBatch):
		return v.batch(line)
	case err == nil && m.isCall():
		return line // mcp-go's to handle
	case err == nil:
		err = m.vetResponse()
	}
	key := idKey(m.ID)
	if err == nil {
		if !v.pending.take(key) {
			v.dropped(len(line))
			return nil
		}
		return line
	}
	v.report(err, len(line))
	if key != "" && !m.isCall() && v.pending.take(key) {
		return protocolErrorLine(m.ID, err)
	}
	return nil
}

// batch fails every waiting request a batch answers.
func (v *lineVet) batch(line []byte) []byte {
	v.report(errBatch, len(line))
	var items []json.RawMessage
	_ = json.Unmarshal(line, &items)
	var out []byte
	for _, item := range items {
		var m rpcMessage
		if json.Unmarshal(item, &m) != nil || m.isCall() {
			continue
		}
		if key := idKey(m.ID); key != "" && v.pending.take(key) {
			out = append(out, protocolErrorLine(m.ID, errBatch)...)
		}
	}
	return out
}

// protocolErrorLine is an error response to id that protocolReply
// recognises.
func protocolErrorLine(id json.RawMessage, err error) []byte {
	why := strings.TrimPrefix(err.Error(), ErrProtocol.Error()+": ")
	line, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32000, "message": protocolMarker + why},
	})
	return append(line, '\n')
}
