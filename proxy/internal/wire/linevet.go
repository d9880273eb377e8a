package wire

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

// The stdio checks (FI-09): mcp-go skips a line it cannot decode, takes a
// response with both result and error for an error, and never answers a
// request whose response came in a batch. LineVet sits between the child's
// stdout and mcp-go: a line that breaks JSON-RPC 2.0 is held back, logged
// and counted, and the request it answers fails at once with
// upstream_protocol_error. StdinTap tells it which requests are waiting.

// protocolMarker starts the message of the error LineVet puts in place of
// a broken reply; random per process, so no upstream can forge it.
var protocolMarker = "mcp-router:" + rand.Text() + ": "

// ProtocolReply returns the protocol error a LineVet put in place of the
// reply err came from, or nil.
func ProtocolReply(err error) error {
	if err == nil {
		return nil
	}
	why, ok := strings.CutPrefix(err.Error(), protocolMarker)
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrProtocol, why)
}

// PendingIDs are the ids (by idKey) of the requests sent to an upstream
// and not yet answered or cancelled.
type PendingIDs struct {
	out groupWriter // the child's stdin: whole messages, never interleaved

	mu    sync.Mutex
	ids   map[string]chan<- []byte // nil: mcp-go waits for the reply
	ended bool                     // the child's output ended: Send fails
}

func (p *PendingIDs) add(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = make(map[string]chan<- []byte)
	}
	p.ids[key] = nil
}

// Empty reports whether no request waits for an answer or for its cancellation to be written.
func (p *PendingIDs) Empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids) == 0
}

// take removes key: whether it was waiting, and Send's channel for it.
func (p *PendingIDs) take(key string) (waiting bool, direct chan<- []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	direct, waiting = p.ids[key]
	delete(p.ids, key)
	return waiting, direct
}

// StdinTap notes the requests mcp-go writes to a child and the ones it
// cancels. mcp-go writes one whole message per Write.
type StdinTap struct {
	W       io.WriteCloser
	Pending *PendingIDs
}

func (t StdinTap) Write(p []byte) (int, error) {
	var cancelled []string
	for line := range bytes.Lines(p) {
		if key := t.note(line); key != "" {
			cancelled = append(cancelled, key)
		}
	}
	n, err := t.Pending.out.write(t.W, p)
	for _, key := range cancelled { // once written: see PendingIDs.Empty
		t.Pending.take(key) // a late answer is then dropped
	}
	return n, err
}

func (t StdinTap) Close() error { return t.W.Close() }

// note records a request's id, and returns the id a cancellation names.
// Plainly written messages take the allocation-free scanner.
func (t StdinTap) note(line []byte) (cancelled string) {
	sc, err := scanJSON(line)
	if err == nil && sc.top == '{' && !sc.escaped {
		env, err := envelopeOf(&sc)
		if err == nil && len(env.method) > 2 && env.method[0] == '"' &&
			bytes.IndexByte(env.method, '\\') < 0 && !methodIs(env.method, "notifications/cancelled") &&
			(env.params == nil || env.params[0] == '{' || string(env.params) == "null") {
			if key := idKey(env.id); key != "" {
				t.Pending.add(key)
			}
			return ""
		}
	}
	return t.noteSlow(line)
}

// noteSlow is note by encoding/json.
func (t StdinTap) noteSlow(line []byte) (cancelled string) {
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
		t.Pending.add(key)
	} else if m.Method == "notifications/cancelled" {
		return idKey(m.Params.RequestID)
	}
	return ""
}

// LineVet passes the lines of r on once checked.
type LineVet struct {
	r       *bufio.Reader
	pending *PendingIDs
	// report logs and counts one broken line; it must not block.
	report func(err error, size int)
	// dropped logs a response to no request of ours (late, or made up).
	dropped func(size int)
	out     []byte // checked, not yet read
	buf     []byte // the line being read
	err     error
}

func NewLineVet(r io.Reader, pending *PendingIDs, report func(error, int), dropped func(int)) *LineVet {
	return &LineVet{r: bufio.NewReader(r), pending: pending, report: report, dropped: dropped}
}

// Read hands on checked lines; a last line without a newline is dropped, as mcp-go would drop it.
func (v *LineVet) Read(p []byte) (int, error) {
	for len(v.out) == 0 && v.err == nil {
		line, err := v.readLine()
		if err != nil {
			v.err = err
			v.pending.end()
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

// readLine reads one whole line into v's buffer, reused once handed on.
func (v *LineVet) readLine() ([]byte, error) {
	buf, _, err := readLine(v.r, math.MaxInt, v.buf[:0])
	v.buf = buf
	if cap(buf) > maxKeptLine {
		v.buf = nil // do not keep a large line's buffer for good
	}
	return buf, err
}

// maxKeptLine is the largest line buffer a LineVet keeps between lines.
const maxKeptLine = 1 << 20

// vet returns what to hand on for one line: the line, nothing, or error
// responses in place of broken responses to waiting requests.
func (v *LineVet) vet(line []byte) []byte {
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
		waiting, direct := v.pending.take(key)
		if !waiting {
			v.dropped(len(line))
			return nil
		}
		return handOn(direct, line)
	}
	v.report(err, len(line))
	if key != "" && !m.isCall() {
		if waiting, direct := v.pending.take(key); waiting {
			return handOn(direct, protocolErrorLine(m.ID, err))
		}
	}
	return nil
}

// handOn is what of a reply goes on to mcp-go: nothing for Send's
// requests, whose channel takes a copy.
func handOn(direct chan<- []byte, line []byte) []byte {
	if direct == nil {
		return line
	}
	direct <- bytes.Clone(line) // never blocks: Send made room for one
	return nil
}

// batch fails every waiting request a batch answers.
func (v *LineVet) batch(line []byte) []byte {
	v.report(errBatch, len(line))
	var items []json.RawMessage
	_ = json.Unmarshal(line, &items)
	var out []byte
	for _, item := range items {
		var m rpcMessage
		if json.Unmarshal(item, &m) != nil || m.isCall() {
			continue
		}
		if key := idKey(m.ID); key != "" {
			if waiting, direct := v.pending.take(key); waiting {
				out = append(out, handOn(direct, protocolErrorLine(m.ID, errBatch))...)
			}
		}
	}
	return out
}

// protocolErrorLine is an error response to id that ProtocolReply knows.
func protocolErrorLine(id json.RawMessage, err error) []byte {
	why := strings.TrimPrefix(err.Error(), ErrProtocol.Error()+": ")
	line, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32000, "message": protocolMarker + why},
	})
	return append(line, '\n')
}

// ErrOutputEnded is Send's error once the child's output has ended.
var ErrOutputEnded = errors.New("the upstream's output ended")

// Send writes line, one whole request with the id id, to the child and
// returns the channel its reply comes on (or LineVet's protocol error line
// in its place); mcp-go never sees it. The channel is closed when the
// child's output ends first. A caller that gives up cancels the request
// through Write, as mcp-go does.
func (t StdinTap) Send(id json.RawMessage, line []byte) (<-chan []byte, error) {
	key := idKey(id)
	if key == "" {
		return nil, fmt.Errorf("sending a request with the id %s: not a request id", id)
	}
	reply := make(chan []byte, 1)
	if !t.Pending.await(key, reply) {
		return nil, ErrOutputEnded
	}
	if _, err := t.Pending.out.write(t.W, line); err != nil {
		t.Pending.take(key)
		return nil, err
	}
	return reply, nil
}

// await notes key as a request whose reply goes to reply; false once the child's output has ended.
func (p *PendingIDs) await(key string, reply chan<- []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return false
	}
	if p.ids == nil {
		p.ids = make(map[string]chan<- []byte)
	}
	p.ids[key] = reply
	return true
}

// end closes the channels of the requests Send sent that still wait.
func (p *PendingIDs) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	for key, reply := range p.ids {
		if reply != nil {
			close(reply)
			delete(p.ids, key)
		}
	}
}
