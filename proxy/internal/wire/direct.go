package wire

import (
	"encoding/json"
	"errors"
	"fmt"
)

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
