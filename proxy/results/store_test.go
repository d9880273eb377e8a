package results

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
	"weak"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestReadReturnsTheWholeInPages(t *testing.T) {
	s := New(Options{})
	text := strings.Repeat("héllo wörld\n", 10000)
	uri, err := s.Keep("alice", text)
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for off := 0; ; {
		page, total, err := s.Read("alice", uri, off, 4097)
		if err != nil {
			t.Fatal(err)
		}
		if total != len(text) {
			t.Fatalf("total %d, want %d", total, len(text))
		}
		if page == "" {
			break
		}
		got.WriteString(page)
		off += len(page)
	}
	if got.String() != text {
		t.Fatalf("pages joined differ from the result kept (%d bytes, want %d)", got.Len(), len(text))
	}
}

func TestAnotherPrincipalGetsNotFound(t *testing.T) {
	s := New(Options{})
	uri, err := s.Keep("alice", "secret result")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Read("bob", uri, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob reading alice's result: got %v, want ErrNotFound", err)
	}
	if _, _, err := s.Read("alice", Scheme+"0123", 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown id: got %v, want ErrNotFound", err)
	}
}

func TestBoundEvictsOldestFirst(t *testing.T) {
	s := New(Options{PerPrincipal: costOf(30, 3)})
	a, _ := s.Keep("alice", strings.Repeat("a", 10))
	b, _ := s.Keep("alice", strings.Repeat("b", 10))
	other, _ := s.Keep("bob", strings.Repeat("x", 30))
	c, _ := s.Keep("alice", strings.Repeat("c", 10))
	d, _ := s.Keep("alice", strings.Repeat("d", 10)) // 40 bytes: a goes
	if _, _, err := s.Read("alice", a, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("oldest result after the bound: got %v, want ErrNotFound", err)
	}
	for _, uri := range []string{b, c, d} {
		if _, _, err := s.Read("alice", uri, 0, 0); err != nil {
			t.Fatalf("newer result %s: %v", uri, err)
		}
	}
	if _, _, err := s.Read("bob", other, 0, 0); err != nil {
		t.Fatalf("another principal's result was evicted: %v", err)
	}
	if _, err := s.Keep("alice", strings.Repeat("z", costOf(31, 2))); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a result over the whole bound: got %v, want ErrTooLarge", err)
	}
}

func TestResultsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Options{TTL: time.Minute})
		uri, _ := s.Keep("alice", "text")
		time.Sleep(59 * time.Second) // faked time: synctest
		if _, _, err := s.Read("alice", uri, 0, 0); err != nil {
			t.Fatalf("before its time: %v", err)
		}
		time.Sleep(time.Second)
		if _, _, err := s.Read("alice", uri, 0, 0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after its time: got %v, want ErrNotFound", err)
		}
	})
}

func TestPagesEndOnCharacters(t *testing.T) {
	s := New(Options{})
	uri, _ := s.Keep("p", "aé") // é is two bytes
	page, _, err := s.Read("p", uri, 0, 2)
	if err != nil || page != "a" {
		t.Fatalf("page of 2 bytes: got %q, %v; want %q", page, err, "a")
	}
	if _, _, err := s.Read("p", uri, 2, 0); err == nil {
		t.Fatal("an offset inside a character was accepted")
	}
}

func TestTotalBoundEvictsFromTheHeaviestPrincipal(t *testing.T) {
	s := New(Options{PerPrincipal: costOf(30, 3), Total: costOf(40, 4)})
	a1, _ := s.Keep("alice", strings.Repeat("a", 10))
	a2, _ := s.Keep("alice", strings.Repeat("a", 10))
	a3, _ := s.Keep("alice", strings.Repeat("a", 10))
	b1, _ := s.Keep("bob", strings.Repeat("b", 10))
	c1, err := s.Keep("carol", strings.Repeat("c", 10)) // 50 bytes: alice, the heaviest, loses her oldest
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Read("alice", a1, 0, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the heaviest principal's oldest result past the total bound: got %v, want ErrNotFound", err)
	}
	for _, r := range []struct{ who, uri string }{{"alice", a2}, {"alice", a3}, {"bob", b1}, {"carol", c1}} {
		if _, _, err := s.Read(r.who, r.uri, 0, 0); err != nil {
			t.Fatalf("%s's %s after the total bound: %v", r.who, r.uri, err)
		}
	}
	if _, err := s.Keep("dave", strings.Repeat("d", costOf(41, 3))); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a result over the total bound: got %v, want ErrTooLarge", err)
	}
}

// costOf is what the bounds count for results of n bytes in all, kept as
// entries results.
func costOf(n, entries int) int { return n + entries*entryCost }

// SEC-25: the bounds count what a result costs besides its text, so that
// results of a byte each, of as many principals, cannot hold far more
// memory than the total bound says (before, 10,000 of them were all kept
// under a total of 64 KiB, some 2 MiB of entries, ids and map slots).
func TestManySmallResultsCountTheirUpkeep(t *testing.T) {
	const total = 64 << 10
	s := New(Options{Total: total})
	for i := range 10_000 {
		if _, err := s.Keep(fmt.Sprintf("principal-%d", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	if kept, most := len(s.byID), total/160; kept > most { // an entry's upkeep, measured: 155 to 167 bytes
		t.Fatalf("%d one-byte results kept under a total bound of %d bytes, want at most %d", kept, total, most)
	}
}

// SEC-24: a page's length is checked without overflow: a huge length
// reads the rest of the result (before, offset+length wrapped negative
// and the page was one character).
func TestHugeLengthReadsTheRest(t *testing.T) {
	s := New(Options{})
	text := strings.Repeat("héllo\n", 100)
	uri, err := s.Keep("alice", text)
	if err != nil {
		t.Fatal(err)
	}
	page, total, err := s.Read("alice", uri, 7, math.MaxInt)
	if err != nil || page != text[7:] || total != len(text) {
		t.Fatalf("a page from 7 of length MaxInt: got %d bytes of %d, %v; want the %d after the offset", len(page), total, err, len(text)-7)
	}
	contents, err := s.ReadResource("alice", fmt.Sprintf("%s?offset=7&length=%d", uri, math.MaxInt))
	if err != nil || len(contents) != 1 || contents[0].(mcp.TextResourceContents).Text != text[7:] {
		t.Fatalf("resources/read from 7 of length MaxInt: %v, %v; want the rest", contents, err)
	}
}

// SEC-25: a result evicted is gone from memory, not only from the index:
// its shelf's slice does not keep it (before, the slot before the
// shelf's start held it until the slice grew again, so a principal's
// results could hold twice the bound).
func TestEvictedResultsAreFreed(t *testing.T) {
	s := New(Options{PerPrincipal: costOf(3<<20, 3)})
	var first weak.Pointer[byte]
	for i := range 4 {
		text := strings.Repeat(string(rune('a'+i)), 1<<20) // 1 MiB of its own
		if i == 0 {
			first = weak.Make(unsafe.StringData(text))
		}
		if _, err := s.Keep("alice", text); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	if first.Value() != nil {
		t.Fatal("the evicted result's text is still held after a collection")
	}
	runtime.KeepAlive(s)
}
