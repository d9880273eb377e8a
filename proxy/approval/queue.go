package approval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// DefaultQueue is how many calls may wait for an answer in the console at
// once: a person reads them one by one, and a model that makes more is
// refused rather than allowed to push older requests out.
const DefaultQueue = 32

// ErrQueueFull refuses a call that would wait in a full console queue.
var ErrQueueFull = errors.New("the console's approval queue is full")

// ErrNoConsole refuses a call that would wait for a console that no one
// serves (a gateway over stdio, or the CLI).
var ErrNoConsole = errors.New("this gateway serves no console to answer in (serve --http serves it at /ui)")

// ErrNotPending is the answer to a request that is no longer waiting (it
// was answered, or its call gave up).
var ErrNotPending = errors.New("no such pending approval")

// Request is a call waiting for an answer in the console.
type Request struct {
	ID        string
	Tool      string // exposed name, or "run_plan" for a plan's steps
	Upstream  string
	Principal string
	// Summary is what the call does: its arguments, summarised and
	// redacted, or a plan's gated steps.
	Summary string
	Since   time.Time
}

// Queue holds the calls waiting for an administrative principal's answer
// in the console, at most its bound; the console lists and answers them.
type Queue struct {
	max int

	mu      sync.Mutex
	served  bool                // a console answers (Serve)
	pending map[string]*waiting // by Request.ID
}

type waiting struct {
	req    Request
	answer chan bool // buffered: the answer never blocks
}

// NewQueue returns a queue of at most max calls [DefaultQueue].
func NewQueue(max int) *Queue {
	if max <= 0 {
		max = DefaultQueue
	}
	return &Queue{max: max, pending: map[string]*waiting{}}
}

// Serve says that a console answers the queue from now on; until then,
// Wait refuses every call with ErrNoConsole.
func (q *Queue) Serve() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.served = true
}

// Wait puts r in the queue and waits for its answer, or for ctx to end;
// a full queue refuses r at once with ErrQueueFull, and one no console
// answers with ErrNoConsole.
func (q *Queue) Wait(ctx context.Context, r Request) (bool, error) {
	w, err := q.add(r)
	if err != nil {
		return false, err
	}
	defer q.drop(w.req.ID)
	select {
	case ok := <-w.answer:
		return ok, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

func (q *Queue) add(r Request) (*waiting, error) {
	var id [12]byte
	rand.Read(id[:])
	r.ID, r.Since = hex.EncodeToString(id[:]), time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.served {
		return nil, ErrNoConsole
	}
	if len(q.pending) >= q.max {
		return nil, fmt.Errorf("%w (%d calls wait for an answer)", ErrQueueFull, q.max)
	}
	w := &waiting{req: r, answer: make(chan bool, 1)}
	q.pending[r.ID] = w
	return w, nil
}

func (q *Queue) drop(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.pending, id)
}

// Pending are the calls waiting, oldest first.
func (q *Queue) Pending() []Request {
	q.mu.Lock()
	out := make([]Request, 0, len(q.pending))
	for _, w := range q.pending {
		out = append(out, w.req)
	}
	q.mu.Unlock()
	slices.SortFunc(out, func(a, b Request) int { return a.Since.Compare(b.Since) })
	return out
}

// Answer approves or declines the waiting call id.
func (q *Queue) Answer(id string, approve bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.pending[id]
	if !ok {
		return ErrNotPending
	}
	delete(q.pending, id)
	w.answer <- approve
	return nil
}
