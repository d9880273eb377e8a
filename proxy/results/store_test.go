package results

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
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
	s := New(Options{PerPrincipal: 30})
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
	if _, err := s.Keep("alice", strings.Repeat("z", 31)); !errors.Is(err, ErrTooLarge) {
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
	s := New(Options{PerPrincipal: 30, Total: 40})
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
	if _, err := s.Keep("dave", strings.Repeat("d", 41)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a result over the total bound: got %v, want ErrTooLarge", err)
	}
}
