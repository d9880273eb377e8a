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

	"github.com/mcp-router/mcp-router/internal/defaults"
)

// DefaultQueue is how many calls may wait in the console at once; more
// are refused rather than push older requests out, unless the principal
// holding most makes room (makeRoomLocked).
const DefaultQueue = 32

// perPrincipal is the share of a queue one principal may hold, so that
// one client's model cannot keep the others' calls from waiting.
func perPrincipal(n int) int { return max(1, n/4) }

// ErrQueueFull refuses a call that would wait in a full console queue.
var ErrQueueFull = errors.New("the console's approval queue is full")

// ErrNoConsole refuses a call that would wait for a console no one serves.
var ErrNoConsole = errors.New("this gateway serves no console to answer in (serve --http serves it at /ui)")

// ErrNotPending answers for a request no longer waiting.
var ErrNotPending = errors.New("no such pending approval")

// Request is a call waiting for an answer in the console.
type Request struct {
	ID        string
	Tool      string // exposed name, or "run_plan" for a plan's steps
	Upstream  string
	Principal string
	// Summary is the arguments summarised and redacted, or a plan's steps.
	Summary string
	Since   time.Time
}

// Queue holds the calls waiting for an answer in the console.
type Queue struct {
	max, each int // in all, and of one principal

	mu      sync.Mutex
	served  bool                // a console answers (Serve)
	pending map[string]*waiting // by Request.ID
}

type waiting struct {
	req    Request
	answer chan Decision // buffered: the answer never blocks
	bumped error         // why it was refused unanswered (makeRoomLocked)
}

// Decision is the console's answer to a waiting call.
type Decision struct {
	Approve bool
	// By is the principal that answered, for the call's audit record.
	By string
}

// NewQueue returns a queue of at most max calls [DefaultQueue].
func NewQueue(max int) *Queue {
	defaults.Set(&max, DefaultQueue)
	return &Queue{max: max, each: perPrincipal(max), pending: map[string]*waiting{}}
}

// Serve says that a console answers the queue; until then Wait refuses with ErrNoConsole.
func (q *Queue) Serve() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.served = true
}

// Wait queues r and waits for its answer or for ctx; a full queue, or a
// principal's full share, refuses at once with ErrQueueFull.
func (q *Queue) Wait(ctx context.Context, r Request) (Decision, error) {
	w, err := q.add(r)
	if err != nil {
		return Decision{}, err
	}
	defer q.drop(w.req.ID)
	select {
	case d := <-w.answer:
		return d, w.bumped // written before the answer was sent
	case <-ctx.Done():
		return Decision{}, ctx.Err()
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
	if q.countLocked(r.Principal) >= q.each {
		return nil, fmt.Errorf("%w for this principal (%d of its calls wait for an answer)", ErrQueueFull, q.each)
	}
	if len(q.pending) >= q.max && !q.makeRoomLocked(r.Principal) {
		return nil, fmt.Errorf("%w (%d calls wait for an answer)", ErrQueueFull, q.max)
	}
	w := &waiting{req: r, answer: make(chan Decision, 1)}
	q.pending[r.ID] = w
	return w, nil
}

// makeRoomLocked refuses, as a full queue does, the newest waiting call
// of the principal holding most when it holds at least two more than
// who, so that four principals filling their shares cannot keep every
// other principal's calls from waiting.
func (q *Queue) makeRoomLocked(who string) bool {
	held := map[string]int{}
	var top *waiting
	for _, w := range q.pending {
		held[w.req.Principal]++
	}
	for _, w := range q.pending {
		if n := held[w.req.Principal]; top == nil || n > held[top.req.Principal] || n == held[top.req.Principal] && w.req.Since.After(top.req.Since) {
			top = w
		}
	}
	if top == nil || held[top.req.Principal] < held[who]+2 {
		return false
	}
	delete(q.pending, top.req.ID)
	top.bumped = fmt.Errorf("%w: the call gave up its place to another principal's (its principal held the most waiting calls)", ErrQueueFull)
	top.answer <- Decision{}
	return true
}

func (q *Queue) countLocked(principal string) int {
	n := 0
	for _, w := range q.pending {
		if w.req.Principal == principal {
			n++
		}
	}
	return n
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

// Answer approves or declines the waiting call id; by is who answers.
func (q *Queue) Answer(id string, approve bool, by string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.pending[id]
	if !ok {
		return ErrNotPending
	}
	delete(q.pending, id)
	w.answer <- Decision{Approve: approve, By: by}
	return nil
}
