// Package results keeps the whole of tool results too large for a model,
// in memory, readable in pages by the principal that made the call only.
// Bounds: Options.PerPrincipal bytes per principal (oldest evicted first),
// Options.Total in all (the largest holder's oldest evicted first, so a
// heavy principal cannot push out a light one's), and Options.TTL. Expired
// results go when the store is next used.
package results

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/internal/defaults"
)

// Scheme is the start of the URI of a kept result; the id follows it.
const Scheme = "mcp-router://results/"

// Defaults of Options.
const (
	// DefaultPerPrincipal bounds the results one principal keeps.
	DefaultPerPrincipal = 16 << 20
	// DefaultTotal bounds the results all principals keep.
	DefaultTotal = 256 << 20
	// DefaultTTL is how long a result stays readable.
	DefaultTTL = time.Hour
)

// ErrNotFound is one answer for a result never kept, expired, evicted or
// another principal's, so that a principal learns nothing of others'.
var ErrNotFound = errors.New("no such result: it expired, was evicted, is not yours, " +
	"or was kept by another replica of the gateway (results stay in the memory of the one that cut them)")

// ErrTooLarge is Keep's answer for a result over a principal's bound.
var ErrTooLarge = errors.New("the result is larger than the bound on kept results")

// Options configures a Store. Zero values take the defaults in brackets.
type Options struct {
	// PerPrincipal bounds one principal's kept bytes [DefaultPerPrincipal].
	PerPrincipal int
	// Total bounds all principals' kept bytes [DefaultTotal].
	Total int
	// TTL is how long a result is readable [DefaultTTL].
	TTL time.Duration
}

// Store keeps whole results per principal.
type Store struct {
	opts Options

	mu    sync.Mutex
	byID  map[string]*entry
	owned map[string]*shelf // by principal
	bytes int               // of every shelf
}

type entry struct {
	id, principal, text string
	expires             time.Time
}

// entryCost is what an entry costs besides its text (measured near 200
// bytes), so that many small results cannot exceed the bounds.
const entryCost = 256

func (e *entry) cost() int { return len(e.text) + entryCost }

// shelf is one principal's results, oldest first, and their bytes.
type shelf struct {
	list  []*entry
	bytes int
}

// New returns an empty store.
func New(opts Options) *Store {
	defaults.Set(&opts.PerPrincipal, DefaultPerPrincipal)
	defaults.Set(&opts.Total, DefaultTotal)
	defaults.Set(&opts.TTL, DefaultTTL)
	return &Store{opts: opts, byID: map[string]*entry{}, owned: map[string]*shelf{}}
}

// TTL is how long a kept result stays readable.
func (s *Store) TTL() time.Duration { return s.opts.TTL }

// Keep keeps text for principal, evicting its oldest results until it fits, and returns its URI.
func (s *Store) Keep(principal, text string) (string, error) {
	if bound := min(s.opts.PerPrincipal, s.opts.Total); len(text)+entryCost > bound {
		return "", fmt.Errorf("%w (%d bytes, bound %d)", ErrTooLarge, len(text), bound)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("naming a kept result: %w", err)
	}
	e := &entry{id: hex.EncodeToString(raw[:]), principal: principal, text: text, expires: time.Now().Add(s.opts.TTL)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	sh := s.owned[principal]
	if sh == nil {
		sh = &shelf{}
		s.owned[principal] = sh
	}
	for len(sh.list) > 0 && sh.bytes+e.cost() > s.opts.PerPrincipal {
		s.drop(sh, sh.list[0])
	}
	for s.bytes+e.cost() > s.opts.Total {
		big := s.largest()
		s.drop(big, big.list[0])
	}
	sh.list = append(sh.list, e)
	sh.bytes += e.cost()
	s.bytes += e.cost()
	s.owned[principal] = sh // eviction may have emptied and dropped it
	s.byID[e.id] = e
	return Scheme + e.id, nil
}

// Read is a page of principal's result from byte offset of at most length
// bytes (the rest when length <= 0), cut back to a whole character.
func (s *Store) Read(principal, uri string, offset, length int) (page string, total int, err error) {
	id, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return "", 0, fmt.Errorf("%q is not a kept result's URI (%s<id>)", uri, Scheme)
	}
	s.mu.Lock()
	s.expire(time.Now())
	e := s.byID[id]
	s.mu.Unlock()
	if e == nil || e.principal != principal {
		return "", 0, ErrNotFound
	}
	if offset < 0 || offset > len(e.text) {
		return "", len(e.text), fmt.Errorf("offset %d is outside the result's %d bytes", offset, len(e.text))
	}
	if offset < len(e.text) && !utf8.RuneStart(e.text[offset]) {
		return "", len(e.text), fmt.Errorf("offset %d is inside a UTF-8 character: start at the offset a page ended at", offset)
	}
	end := len(e.text)
	if length > 0 && length < end-offset { // not offset+length, which a huge length overflows
		end = len(clip.Prefix(e.text, offset+length))
		if end <= offset { // a length shorter than the character there
			_, size := utf8.DecodeRuneInString(e.text[offset:])
			end = offset + size
		}
	}
	return e.text[offset:end], len(e.text), nil
}

// expire drops every result past its time. The caller holds s.mu.
func (s *Store) expire(now time.Time) {
	for _, sh := range s.owned {
		for len(sh.list) > 0 && !now.Before(sh.list[0].expires) {
			s.drop(sh, sh.list[0])
		}
	}
}

// largest is the shelf that holds the most bytes (the store is not empty).
func (s *Store) largest() *shelf {
	var big *shelf
	for _, sh := range s.owned {
		if big == nil || sh.bytes > big.bytes {
			big = sh
		}
	}
	return big
}

// drop removes e, the oldest of sh. The caller holds s.mu.
func (s *Store) drop(sh *shelf, e *entry) {
	sh.list[0] = nil // the array keeps its slots before the slice's start: one must not keep e
	sh.list = sh.list[1:]
	sh.bytes -= e.cost()
	s.bytes -= e.cost()
	delete(s.byID, e.id)
	if len(sh.list) == 0 {
		delete(s.owned, e.principal)
	}
}

// Template is the resource template of kept results: the whole result,
// or a page with ?offset=N&length=M.
func Template() mcp.ResourceTemplate {
	return mcp.NewResourceTemplate(Scheme+"{id}{?offset,length}", "kept result",
		mcp.WithTemplateDescription("The whole of a tool result that was cut for the model, for the principal that made the call; "+
			"?offset= reads on from a byte offset, &length= bounds the page."),
		mcp.WithTemplateMIMEType("text/plain"))
}

// ReadResource answers a resources/read of a kept result for principal.
func (s *Store) ReadResource(principal, uri string) ([]mcp.ResourceContents, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	offset, err := intParam(u, "offset")
	if err != nil {
		return nil, err
	}
	length, err := intParam(u, "length")
	if err != nil {
		return nil, err
	}
	u.RawQuery = ""
	page, _, err := s.Read(principal, u.String(), offset, length)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: page}}, nil
}

// intParam is the query parameter key of u as a number, 0 when absent.
func intParam(u *url.URL, key string) (int, error) {
	v := u.Query().Get(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("reading %s: %s=%q is not a byte count", u.Redacted(), key, v)
	}
	return n, nil
}
