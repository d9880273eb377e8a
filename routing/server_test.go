package routing

import (
	"math"
	"testing"
)

// serverCatalog has two upstreams with a tool each that matches "issue"
// alike; only the tracker's other tools and description speak of bugs,
// sprints and projects.
func serverCatalog(opts IndexOptions) *Index {
	ix := NewIndex(opts)
	ix.SetUpstream("tracker", []Tool{
		{Name: "comment", Description: "Add a comment to an issue."},
		{Name: "create_sprint", Description: "Create a sprint in a project board."},
		{Name: "list_bugs", Description: "List the open bugs of a project."},
	})
	ix.SetUpstream("forum", []Tool{
		{Name: "reply", Description: "Reply to an issue thread."},
		{Name: "list_threads", Description: "List the forum's threads."},
	})
	return ix
}

func TestServerScoreLiftsItsTools(t *testing.T) {
	const req = "comment on the issue in my project, the bug from this sprint"
	hits := serverCatalog(IndexOptions{}).Search(req, 0)
	if len(hits) == 0 || hits[0].Name != "comment" {
		t.Fatalf("got %v, want comment first", hits)
	}
	rank := func(hits []Hit, name string) int {
		for i, h := range hits {
			if h.Name == name {
				return i
			}
		}
		return -1
	}
	// The lift orders the ranking: the tracker's comment tool climbs
	// above the forum's reply tool by more than without it.
	off := serverCatalog(IndexOptions{ServerWeight: -1}).Search(req, 0)
	gap := func(hits []Hit) float64 {
		return hits[rank(hits, "comment")].Raw - hits[rank(hits, "reply")].Raw
	}
	if rank(off, "reply") < 0 || rank(hits, "reply") < 0 {
		t.Fatalf("reply not ranked: on %v, off %v", hits, off)
	}
	if gap(hits) <= gap(off) {
		t.Errorf("comment's lead over reply %.3f with server scores, %.3f without; want larger with", gap(hits), gap(off))
	}
}

func TestServerScoreLeavesCoverageAlone(t *testing.T) {
	const req = "comment on the issue in my project, the bug from this sprint"
	on := serverCatalog(IndexOptions{}).Search(req, 0)
	off := serverCatalog(IndexOptions{ServerWeight: -1}).Search(req, 0)
	cov := map[string]float64{}
	for _, h := range off {
		cov[h.Name] = h.Coverage
	}
	// Coverage is the score less the loss, in float32: the lift, added
	// to both, may move it in the last bits, not more.
	for _, h := range on {
		if want, ok := cov[h.Name]; !ok || math.Abs(h.Coverage-want) > 1e-6 {
			t.Errorf("%s: coverage %.3f with server scores, want %.3f as without", h.Name, h.Coverage, want)
		}
	}
}

func TestServerScoreOneUpstreamIsNoOp(t *testing.T) {
	ix := NewIndex(IndexOptions{})
	ix.SetUpstream("only", []Tool{{Name: "a", Description: "read a file"}, {Name: "b", Description: "write a file"}})
	off := NewIndex(IndexOptions{ServerWeight: -1})
	off.SetUpstream("only", []Tool{{Name: "a", Description: "read a file"}, {Name: "b", Description: "write a file"}})
	got, want := ix.Search("read the file", 0), off.Search("read the file", 0)
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Raw != want[i].Raw {
			t.Errorf("hit %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A tool that names no upstream is a server of its own: tools without one
// do not pool into one long server document that every named server
// outscores, so a named server's tool does not climb past an equal match
// for having a server.
func TestToolsWithoutUpstreamAreServersOfTheirOwn(t *testing.T) {
	loose := []Tool{{Name: "comment", Description: "Comment on an issue thread."}}
	for _, w := range []string{"weather", "stock", "recipe", "flight", "hotel", "currency", "translate", "lyrics", "horoscope", "joke", "news", "movie"} {
		loose = append(loose, Tool{Name: "get_" + w, Description: "Look up the " + w + " for a place or a name, with details."})
	}
	forum := []Tool{
		{Name: "reply", Description: "Reply to an issue thread."},
		{Name: "list_threads", Description: "List the forum's issue threads."},
	}
	build := func(weight float64) *Index {
		ix := NewIndex(IndexOptions{ServerWeight: weight})
		ix.SetUpstream("", loose)
		ix.SetUpstream("forum", forum)
		return ix
	}
	raw := func(hits []Hit, name string) float64 {
		for _, h := range hits {
			if h.Name == name {
				return h.Raw
			}
		}
		t.Fatalf("%s not ranked in %v", name, hits)
		return 0
	}
	const req = "the issue thread"
	on, off := build(0).Search(req, 0), build(-1).Search(req, 0)
	gap := func(hits []Hit) float64 { return raw(hits, "comment") - raw(hits, "reply") }
	if gap(on) < gap(off) {
		t.Errorf("comment leads reply by %.3f with server scores, %.3f without; a tool without an upstream should lose no ground to one with", gap(on), gap(off))
	}

	// Where no tool names an upstream there are no servers to tell apart.
	only := NewIndex(IndexOptions{})
	only.SetUpstream("", loose)
	bare := NewIndex(IndexOptions{ServerWeight: -1})
	bare.SetUpstream("", loose)
	a, b := only.Search("look up the weather", 0), bare.Search("look up the weather", 0)
	for i := range min(len(a), len(b)) {
		if a[i].Name != b[i].Name || a[i].Raw != b[i].Raw {
			t.Fatalf("rank %d: %s %.4f with server scores, %s %.4f without", i, a[i].Name, a[i].Raw, b[i].Name, b[i].Raw)
		}
	}
}
