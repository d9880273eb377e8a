package integrity

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Verdict is what [Store.Check] found for one tool.
type Verdict string

const (
	// VerdictNew: first sight; the tool is now pinned (trust on first use).
	VerdictNew Verdict = "new"
	// VerdictPinned: the contract matches its pin.
	VerdictPinned Verdict = "pinned"
	// VerdictChanged: the contract differs from its pin, now or since the
	// last approval; the hub hides the tool until the change is approved.
	VerdictChanged Verdict = "changed"
)

// severity orders verdicts so a tool listed twice gets the worse one.
func (v Verdict) severity() int {
	switch v {
	case VerdictChanged:
		return 2
	case VerdictNew:
		return 1
	}
	return 0
}

// ErrUnknownTool is returned when approving a tool that has no pin.
var ErrUnknownTool = errors.New("no pin for tool")

// ErrNotShown is returned when approving a contract other than the one
// the approving person was shown: the upstream changed it again since.
var ErrNotShown = errors.New("the definition changed since it was shown; review it again")

// Pin is one pinned tool, as [Store.List] and [Store.Lookup] report it;
// its fields but Upstream and Tool (the upstream's own name) mean what
// [Record]'s do.
type Pin struct {
	Upstream, Tool            string
	Hash                      string
	FirstSeen, ApprovedAt     time.Time
	DescriptionExcerpt        string
	PendingHash               string
	ChangedAt                 time.Time
	PendingExcerpt, Held      string
	Contract, PendingContract string
	GoneSince                 time.Time
}

// Pending reports whether a change is waiting for approval.
func (p Pin) Pending() bool { return p.PendingHash != "" }

// Approved reports whether a person approved the pinned contract and
// nothing changed since.
func (p Pin) Approved() bool { return !p.ApprovedAt.IsZero() && !p.Pending() }

// Store keeps the pins of every upstream's tools in a [PinStore]. It is
// safe for concurrent use. Every Check and approval re-reads the pins in
// one transaction, so other processes' writes are kept.
type Store struct {
	ps  PinStore
	now func() time.Time

	mu        sync.Mutex
	upstreams Pins         // as of the last successful read or write
	queue     []*pinUpdate // updates waiting for the next transaction
	running   bool         // an update is taking the queue's transactions
}

// PinStore persists pins: the shared state database, or memory.
type PinStore interface {
	// UpdatePins reads every pin in one transaction, lets change edit
	// them, and writes the edits when change reports that it made some.
	// change may be called more than once (a retried transaction) and
	// gets a map of its own each time.
	UpdatePins(change func(Pins) bool) error
}

// UpstreamPinStore is a PinStore that can read and write the pins of a
// few upstreams alone, so that a Check does not read every upstream's.
type UpstreamPinStore interface {
	PinStore
	// UpdateUpstreamPins is UpdatePins over the pins of upstreams only (an
	// upstream without pins is absent).
	UpdateUpstreamPins(upstreams []string, change func(Pins) bool) error
}

// Pins is upstream name → upstream's own tool name → pin.
type Pins map[string]map[string]Record

// Record is one pin as stored.
type Record struct {
	Hash               string    `json:"hash"`
	FirstSeen          time.Time `json:"first_seen"`
	ApprovedAt         time.Time `json:"approved_at,omitzero"`
	DescriptionExcerpt string    `json:"description_excerpt"`
	PendingHash        string    `json:"pending_hash,omitempty"`
	ChangedAt          time.Time `json:"changed_at,omitzero"`
	PendingExcerpt     string    `json:"pending_excerpt,omitempty"`
	// Held says why a gateway holds the tool back although its contract
	// matches the pin (quarantine); "" when it does not. Approval clears it.
	Held string `json:"held,omitempty"`
	// Contract and PendingContract are the contracts of Hash and
	// PendingHash as [Contract.Text], for showing what changed.
	Contract        string `json:"contract,omitempty"`
	PendingContract string `json:"pending_contract,omitempty"`
	// GoneSince is when a listing of the upstream first lacked the tool;
	// zero while it is listed. Past VanishedPinTTL the pin is dropped.
	GoneSince time.Time `json:"gone_since,omitzero"`
}

// VanishedPinTTL is how long the pin of a tool its upstream no longer
// lists is kept; a tool back later is pinned anew.
const VanishedPinTTL = 30 * 24 * time.Hour

// Equal reports whether r and o are the same pin (times compared as
// instants).
func (r Record) Equal(o Record) bool {
	return r.Hash == o.Hash && r.FirstSeen.Equal(o.FirstSeen) && r.ApprovedAt.Equal(o.ApprovedAt) &&
		r.DescriptionExcerpt == o.DescriptionExcerpt && r.PendingHash == o.PendingHash &&
		r.ChangedAt.Equal(o.ChangedAt) && r.PendingExcerpt == o.PendingExcerpt && r.Held == o.Held &&
		r.Contract == o.Contract && r.PendingContract == o.PendingContract && r.GoneSince.Equal(o.GoneSince)
}

// Clone returns a deep copy of p.
func (p Pins) Clone() Pins {
	out := make(Pins, len(p))
	for u, tools := range p {
		out[u] = maps.Clone(tools)
	}
	return out
}

// OpenStore reads the pins of ps and returns the Store keeping them.
func OpenStore(ps PinStore) (*Store, error) {
	s := NewStore(ps)
	if err := s.update(nil, func(Pins) bool { return false }); err != nil {
		return nil, err
	}
	return s, nil
}

// NewStore returns the Store keeping the pins of ps without reading them:
// its first Check does (and fails while they cannot be read).
func NewStore(ps PinStore) *Store {
	return &Store{ps: ps, now: func() time.Time { return time.Now().UTC().Truncate(time.Second) }}
}

// Unavailable returns a Store whose every Check and approval fails with
// err, for a gateway whose state cannot be used (integrity fails closed).
func Unavailable(err error) *Store {
	return &Store{ps: unavailablePins{err}, now: time.Now}
}

type unavailablePins struct{ err error }

func (u unavailablePins) UpdatePins(func(Pins) bool) error { return u.err }

// Check compares the tools of the upstream whose pins are kept under
// upstream with the pins: unknown tools are pinned (trust on first use),
// changed ones reported and recorded as pending. A tool missing from
// tools keeps its pin. Once a change is recorded the tool stays
// [VerdictChanged] until approved, even if the upstream reverts it.
// On error nothing was recorded: treat every tool as changed.
func (s *Store) Check(upstream string, tools []mcp.Tool) (map[string]Verdict, error) {
	contracts := make([]Contract, len(tools))
	for i, t := range tools {
		contracts[i] = ContractOf(t)
	}
	return s.CheckContracts(upstream, tools, contracts)
}

// CheckContracts is Check with contracts[i] = [ContractOf] tools[i],
// decoded by the caller outside the store's lock.
func (s *Store) CheckContracts(upstream string, tools []mcp.Tool, contracts []Contract) (map[string]Verdict, error) {
	if upstream == "" {
		return nil, errors.New("checking pins: empty upstream name")
	}
	if len(contracts) != len(tools) {
		return nil, fmt.Errorf("checking pins of %s: %d contracts for %d tools", upstream, len(contracts), len(tools))
	}
	var verdicts map[string]Verdict
	err := s.update([]string{upstream}, func(set Pins) bool {
		verdicts = make(map[string]Verdict, len(tools))
		dirty, now := false, s.now()
		for i, t := range tools {
			v, d := check(set.tools(upstream), t, contracts[i], now)
			dirty = dirty || d
			if old, ok := verdicts[t.Name]; !ok || v.severity() > old.severity() {
				verdicts[t.Name] = v
			}
		}
		return markVanished(set.tools(upstream), verdicts, now) || dirty
	})
	if err != nil {
		return nil, fmt.Errorf("checking pins of %s: %w", upstream, err)
	}
	return verdicts, nil
}

// check judges one tool against its upstream's pins, updating them.
func check(pins map[string]Record, t mcp.Tool, c Contract, now time.Time) (v Verdict, dirty bool) {
	h := c.Hash
	rec, ok := pins[t.Name]
	switch {
	case !ok:
		pins[t.Name] = Record{Hash: h, FirstSeen: now, DescriptionExcerpt: excerpt(t.Description), Contract: c.Text()}
		return VerdictNew, true
	case rec.PendingHash == "" && rec.Hash == h:
		return VerdictPinned, false
	case rec.PendingHash == h:
		return VerdictChanged, false
	}
	rec.PendingHash, rec.ChangedAt, rec.PendingExcerpt = h, now, excerpt(t.Description)
	rec.PendingContract = c.Text()
	pins[t.Name] = rec
	return VerdictChanged, true
}

// markVanished records since when the listing lacks each pinned tool,
// clears that of the listed ones, and drops the pins of tools gone for
// VanishedPinTTL; it reports whether it changed anything.
func markVanished(pins map[string]Record, listed map[string]Verdict, now time.Time) (dirty bool) {
	for name, rec := range pins {
		_, here := listed[name]
		switch {
		case here && !rec.GoneSince.IsZero():
			rec.GoneSince = time.Time{}
		case here || !rec.GoneSince.IsZero() && now.Sub(rec.GoneSince) < VanishedPinTTL:
			continue
		case rec.GoneSince.IsZero():
			rec.GoneSince = now
		default:
			delete(pins, name)
			dirty = true
			continue
		}
		pins[name] = rec
		dirty = true
	}
	return dirty
}

// ApproveShown approves a tool by its exposed name, which resolve maps
// to the upstream and its own tool name: a pending change is approved as
// recorded; with nothing pending the pin is marked approved (releasing a
// quarantined tool). shown is the hash (or a prefix of at least
// [MinShownHash] hex digits) of the contract the person was shown: when
// the contract waiting is another, the error is [ErrNotShown]. An empty
// shown approves whatever is waiting.
func (s *Store) ApproveShown(exposedName, shown string, resolve func(string) (upstream, tool string, ok bool)) error {
	upstream, tool, ok := resolve(exposedName)
	if !ok {
		return fmt.Errorf("approving %s: %w", exposedName, ErrUnknownTool)
	}
	if shown != "" && len(shown) < MinShownHash {
		return fmt.Errorf("approving %s: hash %q is shorter than %d hex digits", exposedName, shown, MinShownHash)
	}
	var found bool
	var current string
	err := s.update([]string{upstream}, func(set Pins) bool {
		rec, ok := set[upstream][tool]
		if found = ok; !ok {
			return false
		}
		if current = cmp.Or(rec.PendingHash, rec.Hash); !strings.HasPrefix(current, shown) {
			return false
		}
		if rec.Pending() {
			rec.Hash, rec.DescriptionExcerpt, rec.Contract = rec.PendingHash, rec.PendingExcerpt, rec.PendingContract
		}
		rec.PendingHash, rec.ChangedAt, rec.PendingExcerpt, rec.Held, rec.PendingContract = "", time.Time{}, "", "", ""
		rec.ApprovedAt = s.now()
		set[upstream][tool] = rec
		return true
	})
	switch {
	case err != nil:
		return fmt.Errorf("approving %s (%s on %s): %w", exposedName, tool, upstream, err)
	case !found:
		return fmt.Errorf("approving %s (%s on %s): %w", exposedName, tool, upstream, ErrUnknownTool)
	case !strings.HasPrefix(current, shown):
		return fmt.Errorf("approving %s (%s on %s): %w: shown %s, now %s", exposedName, tool, upstream, ErrNotShown, shown, ShortHash(current))
	}
	return nil
}

// MinShownHash is the fewest hex digits of a hash that
// [Store.ApproveShown] takes; [ShortHash] prints that many. An upstream
// chooses both of the definitions it may swap, so the bound is against a
// collision: 128 bits, where 48 took minutes on one core.
const MinShownHash = 32

// ShortHash is the first MinShownHash hex digits of a contract hash.
func ShortHash(h string) string { return h[:min(MinShownHash, len(h))] }

// Shown is the hash of the contract an approval of p approves: the one
// waiting, else the pinned one.
func (p Pin) Shown() string { return cmp.Or(p.PendingHash, p.Hash) }

// ShownContract is the contract an approval of p approves.
func (p Pin) ShownContract() string {
	if p.Pending() {
		return p.PendingContract
	}
	return p.Contract
}

// List returns every pin, sorted by upstream and tool, as of the last Open,
// Check or approval in this process. With an [UpstreamPinStore], the pins
// of an upstream changed since Open lack their contract texts.
func (s *Store) List() []Pin {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pins []Pin
	for upstream, tools := range s.upstreams {
		for tool, rec := range tools {
			pins = append(pins, rec.pin(upstream, tool))
		}
	}
	slices.SortFunc(pins, func(a, b Pin) int {
		return cmp.Or(cmp.Compare(a.Upstream, b.Upstream), cmp.Compare(a.Tool, b.Tool))
	})
	return pins
}

// Lookup returns one pin, as List has it.
func (s *Store) Lookup(upstream, tool string) (Pin, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.upstreams[upstream][tool]
	if !ok {
		return Pin{}, false
	}
	return rec.pin(upstream, tool), true
}

// Pending reports whether a changed contract waits for approval.
func (r Record) Pending() bool { return r.PendingHash != "" }

func (r Record) pin(upstream, tool string) Pin {
	return Pin{
		Upstream: upstream, Tool: tool, Hash: r.Hash, FirstSeen: r.FirstSeen,
		ApprovedAt: r.ApprovedAt, DescriptionExcerpt: r.DescriptionExcerpt,
		PendingHash: r.PendingHash, ChangedAt: r.ChangedAt, PendingExcerpt: r.PendingExcerpt,
		Held: r.Held, Contract: r.Contract, PendingContract: r.PendingContract, GoneSince: r.GoneSince,
	}
}

// tools returns the upstream's pins, creating the map.
func (set Pins) tools(upstream string) map[string]Record {
	pins, ok := set[upstream]
	if !ok {
		pins = make(map[string]Record)
		set[upstream] = pins
	}
	return pins
}

// update lets change edit the pins of the upstreams in scope (every
// upstream's when nil) in one transaction, written when change reports a
// difference; the in-memory pins change only once written. Updates that
// arrive while a transaction runs share the next one (group commit): the
// caller that found none running runs them until the queue is empty, the
// others wait on their channel, so no goroutine is started.
func (s *Store) update(scope []string, change func(Pins) bool) error {
	u := &pinUpdate{scope: scope, change: change, done: make(chan error, 1)}
	s.mu.Lock()
	s.queue = append(s.queue, u)
	if s.running {
		s.mu.Unlock()
		return <-u.done
	}
	s.running = true
	for len(s.queue) > 0 {
		batch := s.queue
		s.queue = nil
		s.mu.Unlock()
		latest, all, err := s.transact(batch)
		s.mu.Lock()
		if err == nil {
			s.keep(latest, all, batch)
		}
		for _, b := range batch {
			b.done <- err
		}
	}
	s.running = false
	s.mu.Unlock()
	return <-u.done
}

// pinUpdate is one update waiting for its transaction.
type pinUpdate struct {
	scope  []string
	change func(Pins) bool
	done   chan error // buffered 1
}

// transact runs batch in one transaction over the union of its scopes
// and returns the pins as written and whether they are every pin.
func (s *Store) transact(batch []*pinUpdate) (latest Pins, all bool, err error) {
	record := func(set Pins) bool {
		latest = set
		dirty := false
		for _, b := range batch {
			dirty = b.change(set) || dirty
		}
		return dirty
	}
	scope := unionScope(batch)
	ups, scoped := s.ps.(UpstreamPinStore)
	if scope == nil || !scoped {
		err = s.ps.UpdatePins(record)
		return latest, true, err // latest as record left it
	}
	err = ups.UpdateUpstreamPins(scope, record)
	return latest, false, err
}

// unionScope is every upstream of batch's scopes; nil if one is unscoped.
func unionScope(batch []*pinUpdate) []string {
	scope := []string{}
	for _, b := range batch {
		if b.scope == nil {
			return nil
		}
		for _, u := range b.scope {
			if !slices.Contains(scope, u) {
				scope = append(scope, u)
			}
		}
	}
	return scope
}

// keep makes latest the in-memory pins (only the batch's, unless all).
func (s *Store) keep(latest Pins, all bool, batch []*pinUpdate) {
	if all {
		s.upstreams = latest
		return
	}
	if s.upstreams == nil {
		s.upstreams = Pins{}
	}
	for _, b := range batch {
		for _, u := range b.scope {
			delete(s.upstreams, u)
			if len(latest[u]) > 0 {
				s.upstreams[u] = withoutContracts(latest[u])
			}
		}
	}
}

// withoutContracts drops the texts a vetting gateway never reads.
func withoutContracts(pins map[string]Record) map[string]Record {
	for tool, rec := range pins {
		rec.Contract, rec.PendingContract = "", ""
		pins[tool] = rec
	}
	return pins
}

// Hold records why the upstream's tools in held are held back although
// their contracts match their pins, and clears it for its other pinned
// tools.
func (s *Store) Hold(upstream string, held map[string]string) error {
	if s.holding(upstream, held) {
		return nil // a first start holds nothing: no second transaction per upstream
	}
	err := s.update([]string{upstream}, func(set Pins) bool {
		dirty := false
		for tool, rec := range set[upstream] {
			if why := held[tool]; why != rec.Held {
				rec.Held = why
				set[upstream][tool] = rec
				dirty = true
			}
		}
		return dirty
	})
	if err != nil {
		return fmt.Errorf("recording the held tools of %s: %w", upstream, err)
	}
	return nil
}

// holding reports whether the upstream's pins, as this store last read
// or wrote them (its vetting's Check did, just before), already record
// held: a Hold would change nothing.
func (s *Store) holding(upstream string, held map[string]string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.upstreams == nil {
		return false // never read
	}
	for tool, rec := range s.upstreams[upstream] {
		if held[tool] != rec.Held {
			return false
		}
	}
	return true
}
