package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrOutputEnded is the error of StdinTap.Send once the child's output
// has ended: no reply can come any more.
var ErrOutputEnded = errors.New("the upstream's output ended")

// Send writes line, one whole request with the id id (as JSON), to the
// child and returns the channel its reply comes on: the line as the
// child wrote it, once LineVet found it a well-formed response, or the
// protocol error line LineVet puts in place of a broken one. mcp-go never
// sees the reply, so it is decoded once, by the caller. The channel is
// closed, with no reply, when the child's output ends first. A caller
// that gives up cancels the request as mcp-go does (a
// notifications/cancelled written through Write), which forgets it.
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

// await notes key as a request whose reply goes to reply; false once the
// child's output has ended.
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

// end closes the channels of the requests Send sent that wait still: the
// child's output ended, so no reply will come.
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
