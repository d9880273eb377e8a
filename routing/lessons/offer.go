package lessons

import (
	"context"
	"errors"
	"time"
)

// DefaultMaxOffered is MemoryOptions.MaxOffered's default.
const DefaultMaxOffered = 64

// offerTimeout bounds learning one offer: a stuck store cannot hold Close.
const offerTimeout = 30 * time.Second

// offers is the queue of lessons offered and not yet learned, guarded by
// Memory.qmu. Offer starts a worker when none runs; it ends with the queue.
type offers struct {
	queue   []offer
	idle    chan struct{} // closed when the running worker ends; nil when none runs
	closed  bool
	dropped int64 // offers refused since the Memory was made
}

type offer struct {
	ctx context.Context // the offerer's values, without its cancellation
	l   Lesson
}

// Offer takes l to be learned in the background, ctx's cancellation
// aside, and reports whether it was taken: past MaxOffered waiting, and
// after Close, it is refused with a warning.
func (m *Memory) Offer(ctx context.Context, l Lesson) bool {
	m.qmu.Lock()
	defer m.qmu.Unlock()
	q := &m.offers
	if q.closed || len(q.queue) >= m.opts.MaxOffered {
		q.dropped++
		m.opts.Logger.Warn("routing lesson dropped", "tool", l.Tool, "waiting", len(q.queue), "closed", q.closed, "dropped", q.dropped)
		return false
	}
	q.queue = append(q.queue, offer{context.WithoutCancel(ctx), l})
	if q.idle == nil {
		q.idle = make(chan struct{})
		go m.learnOffered(q.idle)
	}
	return true
}

// learnOffered learns the offered lessons in order, then closes idle.
func (m *Memory) learnOffered(idle chan struct{}) {
	defer close(idle)
	for {
		m.qmu.Lock()
		if len(m.offers.queue) == 0 {
			m.offers.idle = nil
			m.qmu.Unlock()
			return
		}
		o := m.offers.queue[0]
		m.offers.queue[0] = offer{}
		m.offers.queue = m.offers.queue[1:]
		m.qmu.Unlock()
		m.learnOne(o)
	}
}

// learnOne learns an offered lesson and logs what came of it.
func (m *Memory) learnOne(o offer) {
	ctx, cancel := context.WithTimeout(o.ctx, offerTimeout)
	defer cancel()
	switch l, err := m.Learn(ctx, o.l); {
	case errors.Is(err, ErrOverruled):
		m.opts.Logger.Debug("routing lesson overruled by feedback", "tool", o.l.Tool)
	case err != nil:
		m.opts.Logger.Warn("routing lesson not learned", "tool", o.l.Tool, "err", err)
	default:
		m.opts.Logger.Info("routing lesson learned", "tool", l.Tool, "source", l.Source, "lesson", l.ID)
	}
}

// Close refuses later offers and waits for those taken; close it before
// its store.
func (m *Memory) Close() {
	m.qmu.Lock()
	m.offers.closed = true
	idle := m.offers.idle
	m.qmu.Unlock()
	if idle != nil {
		<-idle // the worker ends only once the queue is empty
	}
}
