package call

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/time/rate"

	"github.com/mcp-router/mcp-router/internal/readable"
)

// Quota bounds the calls of a principal to the tools that match it,
// counted together; with Principal "*" each principal counts on its own.
type Quota struct {
	// Principal is a token fingerprint, frontdoor.LocalPrincipal, or "*".
	Principal string
	// Tool is a tool name or a glob (path.Match syntax); "*" is every tool.
	Tool string
	// CallsPerMinute is how many calls may start in a minute; 0 is no bound.
	CallsPerMinute int
	// Concurrent is how many calls may run at once; 0 is no bound.
	Concurrent int
}

// CheckQuota says what is wrong with q, if anything.
func CheckQuota(q Quota) error {
	if q.Principal == "" {
		return fmt.Errorf("principal is empty (use \"*\" for every principal)")
	}
	if q.Tool == "" {
		return fmt.Errorf("tool is empty (use \"*\" for every tool)")
	}
	if _, err := path.Match(q.Tool, ""); err != nil {
		return fmt.Errorf("tool %q is not a valid glob: %w", q.Tool, err)
	}
	if q.CallsPerMinute < 0 || q.Concurrent < 0 {
		return fmt.Errorf("calls_per_minute and concurrent must not be negative")
	}
	if q.CallsPerMinute == 0 && q.Concurrent == 0 {
		return fmt.Errorf("sets neither calls_per_minute nor concurrent")
	}
	return nil
}

func (q Quota) String() string {
	s := fmt.Sprintf("quota principal=%s tool=%s", q.Principal, q.Tool)
	if q.CallsPerMinute > 0 {
		s += fmt.Sprintf(" calls_per_minute=%d", q.CallsPerMinute)
	}
	if q.Concurrent > 0 {
		s += fmt.Sprintf(" concurrent=%d", q.Concurrent)
	}
	return s
}

func (q Quota) matches(principal, tool string) bool {
	if q.Principal != "*" && q.Principal != principal {
		return false
	}
	ok, _ := path.Match(q.Tool, tool)
	return ok
}

// QuotaError is why a call was refused by a quota.
type QuotaError struct {
	Quota     Quota
	Principal string
	// Concurrent is set when refused for the calls running.
	Concurrent bool
	// RetryAfter is when the quota has room again (0: when a call ends).
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string {
	if e.Concurrent {
		return fmt.Sprintf("%s: principal %s has %d calls running, the most allowed; retry when one ends",
			e.Quota, e.Principal, e.Quota.Concurrent)
	}
	return fmt.Sprintf("%s: principal %s made %d calls in the last minute, the most allowed; retry after %s",
		e.Quota, e.Principal, e.Quota.CallsPerMinute, readable.Duration(e.RetryAfter))
}

// quotaKey is one count: a quota and, for "*", the principal it counts.
type quotaKey struct {
	quota     int
	principal string
}

// QuotaCounter counts calls in one-minute windows shared by replicas.
type QuotaCounter interface {
	// Take counts one call under key in window unless limit are counted,
	// and reports whether it did.
	Take(ctx context.Context, key string, window time.Time, limit int) (bool, error)
}

// quotaWindow is the window of a shared calls-per-minute count.
const quotaWindow = time.Minute

// quotas enforces the quotas of a hub (counts bounded by quotas times
// configured principals). A shared counter counts calls per minute;
// concurrent calls are always counted here.
type quotas struct {
	list   []Quota
	shared QuotaCounter // nil: calls per minute counted here
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	buckets map[quotaKey]*rate.Limiter
	running map[quotaKey]int
}

func newQuotas(list []Quota, shared QuotaCounter, log *slog.Logger) *quotas {
	if len(list) == 0 {
		return nil
	}
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	return &quotas{list: list, shared: shared, log: log, now: time.Now,
		buckets: map[quotaKey]*rate.Limiter{}, running: map[quotaKey]int{}}
}

// acquire admits a call under every quota that matches it, or says which
// refused it; release must be called once the call ends.
func (qs *quotas) acquire(ctx context.Context, principal, tool string) (release func(), _ *QuotaError) {
	if qs == nil {
		return func() {}, nil
	}
	keys, qerr := qs.admitHere(principal, tool)
	if qerr != nil {
		return nil, qerr
	}
	var once sync.Once
	release = func() { once.Do(func() { qs.leave(keys) }) }
	if qerr := qs.admitShared(ctx, keys); qerr != nil {
		release()
		return nil, qerr
	}
	return release, nil
}

// admitHere applies the concurrent bounds and, without a shared counter,
// the calls per minute; it returns the matching quotas' keys.
func (qs *quotas) admitHere(principal, tool string) ([]quotaKey, *QuotaError) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	var keys []quotaKey
	for i, q := range qs.list {
		if !q.matches(principal, tool) {
			continue
		}
		k := quotaKey{i, principal}
		if q.Concurrent > 0 && qs.running[k] >= q.Concurrent {
			return nil, &QuotaError{Quota: q, Principal: principal, Concurrent: true}
		}
		keys = append(keys, k)
	}
	if qs.shared == nil {
		if qerr := qs.takeLocked(keys); qerr != nil {
			return nil, qerr
		}
	}
	for _, k := range keys {
		if qs.list[k.quota].Concurrent > 0 {
			qs.running[k]++
		}
	}
	return keys, nil
}

// takeLocked takes a token of each key's bucket only if all have room.
func (qs *quotas) takeLocked(keys []quotaKey) *QuotaError {
	var taken []*rate.Reservation
	for _, k := range keys {
		q := qs.list[k.quota]
		if q.CallsPerMinute <= 0 {
			continue
		}
		b := qs.buckets[k]
		if b == nil {
			b = rate.NewLimiter(rate.Limit(float64(q.CallsPerMinute)/60), q.CallsPerMinute)
			qs.buckets[k] = b
		}
		r := b.Reserve()
		if wait := r.Delay(); wait > 0 {
			r.Cancel()
			for _, t := range taken {
				t.Cancel()
			}
			return &QuotaError{Quota: q, Principal: k.principal,
				RetryAfter: wait.Truncate(time.Millisecond) + time.Millisecond}
		}
		taken = append(taken, r)
	}
	return nil
}

// admitShared counts the call in the shared counter. A failing counter
// does not refuse calls: that quota is counted here, with a warning.
func (qs *quotas) admitShared(ctx context.Context, keys []quotaKey) *QuotaError {
	if qs.shared == nil {
		return nil
	}
	now := qs.now()
	window := now.Truncate(quotaWindow)
	for _, k := range keys {
		q := qs.list[k.quota]
		if q.CallsPerMinute <= 0 {
			continue
		}
		ok, err := qs.shared.Take(ctx, q.String()+" for "+k.principal, window, q.CallsPerMinute)
		if err != nil {
			qs.log.Warn("shared quota count failed: counted in this gateway alone", "quota", q.String(), "err", err)
			qs.mu.Lock()
			qerr := qs.takeLocked([]quotaKey{k})
			qs.mu.Unlock()
			if qerr != nil {
				return qerr
			}
			continue
		}
		if !ok {
			return &QuotaError{Quota: q, Principal: k.principal,
				RetryAfter: window.Add(quotaWindow).Sub(now).Truncate(time.Millisecond) + time.Millisecond}
		}
	}
	return nil
}

func (qs *quotas) leave(keys []quotaKey) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	for _, k := range keys {
		if qs.list[k.quota].Concurrent > 0 {
			if qs.running[k]--; qs.running[k] <= 0 {
				delete(qs.running, k)
			}
		}
	}
}

// RepeatedCallError is why a call was refused by the repeat breaker.
type RepeatedCallError struct {
	Tool  string
	Times int
}

func (e *RepeatedCallError) Error() string {
	return fmt.Sprintf("this session called %s with the same arguments %d times in a row, the most allowed: "+
		"the result will not change, so change approach (other arguments, another tool, or ask the user)", e.Tool, e.Times)
}

// maxRepeatSessions bounds the sessions the repeat breaker remembers.
const maxRepeatSessions = 10000

// repeats remembers each session's last call and how often it came in a row.
type repeats struct {
	limit int

	mu   sync.Mutex
	last map[string]repeatEntry
}

type repeatEntry struct {
	call  [sha256.Size]byte
	times int
}

func newRepeats(limit int) *repeats {
	if limit <= 0 {
		return nil
	}
	return &repeats{limit: limit, last: map[string]repeatEntry{}}
}

// note refuses a call its session made limit times in a row just before.
func (r *repeats) note(session, tool string, args any) *RepeatedCallError {
	if r == nil {
		return nil
	}
	call := callDigest(tool, args)
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.last[session]
	if ok && e.call == call {
		if e.times >= r.limit {
			return &RepeatedCallError{Tool: tool, Times: e.times}
		}
		e.times++
	} else {
		if !ok && len(r.last) >= maxRepeatSessions {
			for k := range r.last {
				delete(r.last, k)
				break
			}
		}
		e = repeatEntry{call: call, times: 1}
	}
	r.last[session] = e
	return nil
}

func (r *repeats) forget(session string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.last, session)
	r.mu.Unlock()
}

// callDigest identifies a call by its tool and its arguments' JSON.
func callDigest(tool string, args any) [sha256.Size]byte {
	var raw []byte
	switch a := args.(type) {
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	}
	var v any
	if raw != nil && json.Unmarshal(raw, &v) == nil {
		args = v
	}
	b, err := json.Marshal(args)
	if err != nil {
		b = fmt.Appendf(nil, "%#v", args)
	}
	return sha256.Sum256(append(append([]byte(tool), 0), b...))
}

// Limits are the quotas and the repeat bound of a hub's calls.
type Limits struct {
	quotas  *quotas  // nil without quotas
	repeats *repeats // nil without a repeat bound
}

// NewLimits applies list, counting calls per minute in shared when set,
// and refuses the same call made more than repeatCalls times in a row by
// one session (0: no bound). A nil log is silence.
func NewLimits(list []Quota, shared QuotaCounter, repeatCalls int, log *slog.Logger) *Limits {
	return &Limits{quotas: newQuotas(list, shared, log), repeats: newRepeats(repeatCalls)}
}

// Stage applies the repeat breaker and the quotas to a call.
func (l *Limits) Stage(ctx context.Context, c *Call, next Handler) (*mcp.CallToolResult, error) {
	if l.repeats != nil {
		if err := l.repeats.note(repeatKey(c), c.Tool, c.Args); err != nil {
			return nil, &Error{Kind: KindRepeatedCall, Upstream: c.Upstream, Tool: c.Tool, Err: err}
		}
	}
	release, qerr := l.quotas.acquire(ctx, c.Who(), c.Tool)
	if qerr != nil {
		return nil, &Error{Kind: KindQuotaExceeded, Upstream: c.Upstream, Tool: c.Tool, Err: qerr}
	}
	defer release()
	return next(ctx, c)
}

// repeatKey is whose calls count together: the session's, or without one, the credential's.
func repeatKey(c *Call) string {
	if c.Session != "" {
		return c.Session
	}
	return "principal:" + c.Who()
}

// Forget drops what the limits remember of an ended client session.
func (l *Limits) Forget(session string) { l.repeats.forget(session) }
