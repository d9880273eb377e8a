package routing

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// instanceTools are the tools of one filesystem-like server, as an instance
// named up (prefix up_) with the server description desc exposes them.
func instanceTools(up, desc string) []Tool {
	own := []struct{ name, desc string }{
		{"read_text_file", "Read the complete contents of a file from the file system as text."},
		{"write_file", "Create a new file or completely overwrite an existing file with new content."},
		{"list_directory", "Get a detailed listing of all files and directories in a specified path."},
		{"search_files", "Recursively search for files and directories matching a pattern."},
	}
	out := make([]Tool, len(own))
	for i, o := range own {
		out[i] = Tool{Name: up + "_" + o.name, Original: o.name, Upstream: up, Description: o.desc,
			Server: desc, Contract: "c-" + o.name,
			InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string","description":"Path of the file"}}}`)}
	}
	return out
}

// instancesRouter has three instances of one filesystem server, told
// apart only by their names and configured descriptions.
func instancesRouter(opts RouterOptions) *Router {
	r := NewRouter(opts)
	r.SetUpstream("fs1", instanceTools("fs1", "source code of the company website"))
	r.SetUpstream("notes", instanceTools("notes", "my personal notes folder: todo lists, journal, reading notes"))
	r.SetUpstream("photos", instanceTools("photos", "holiday pictures and scanned receipts"))
	return r
}

func TestRouteServerDescriptionPicksTheInstance(t *testing.T) {
	r := instancesRouter(RouterOptions{})
	for _, tt := range []struct{ query, up string }{
		{"open the todo file in my notes", "notes"},
		{"read the scanned receipt from the holiday", "photos"},
		{"read a file of the company website source", "fs1"},
	} {
		d := r.Route(context.Background(), Request{Query: tt.query})
		names := selectedNames(d)
		if !slices.Contains(names, tt.up+"_read_text_file") {
			t.Errorf("%q: got %v, want %s_read_text_file", tt.query, names, tt.up)
		}
		for _, c := range d.Selected {
			if c.Upstream != tt.up {
				t.Errorf("%q: selected %s of upstream %s, want only instance %s's tools", tt.query, c.Name, c.Upstream, tt.up)
			}
		}
	}
}

func TestRouteCollapsesInstancesOfOneServer(t *testing.T) {
	r := instancesRouter(RouterOptions{})
	d := r.Route(context.Background(), Request{Query: "open the todo file in my notes"})
	own := map[string][]string{}
	for _, c := range d.Selected {
		t0, _ := r.Tool(c.Name)
		own[t0.Original] = append(own[t0.Original], c.Name)
	}
	for name, tools := range own {
		if len(tools) > 1 {
			t.Errorf("%s selected from %d instances: %v, want one", name, len(tools), tools)
		}
	}
	i := slices.IndexFunc(d.Selected, func(c Candidate) bool { return c.Name == "notes_read_text_file" })
	if i < 0 {
		t.Fatalf("got %v, want notes_read_text_file", selectedNames(d))
	}
	alt := slices.Sorted(slices.Values(d.Selected[i].Alternatives))
	if !slices.Equal(alt, []string{"fs1_read_text_file", "photos_read_text_file"}) {
		t.Errorf("notes_read_text_file alternatives: got %v, want the other two instances' read_text_file", alt)
	}
	for _, c := range d.Ranked {
		if strings.HasSuffix(c.Name, "_read_text_file") && c.Name != "notes_read_text_file" {
			t.Errorf("ranking still holds %s beside notes_read_text_file", c.Name)
		}
	}
}

func TestRouteKeepsToolsWithoutContractApart(t *testing.T) {
	r := NewRouter(RouterOptions{})
	for _, up := range []string{"a", "b"} {
		tools := instanceTools(up, "")
		for i := range tools {
			tools[i].Contract = ""
		}
		r.SetUpstream(up, tools)
	}
	d := r.Route(context.Background(), Request{Query: "read the contents of a text file"})
	names := selectedNames(d)
	if !slices.Contains(names, "a_read_text_file") || !slices.Contains(names, "b_read_text_file") {
		t.Errorf("got %v, want both read_text_file: without a known contract nothing is collapsed", names)
	}
}

func TestRouteCollapseDuplicatesOffKeepsInstances(t *testing.T) {
	p := DefaultFusePolicy()
	p.CollapseDuplicates = false
	r := instancesRouter(RouterOptions{Fuse: &p})
	d := r.Route(context.Background(), Request{Query: "read the contents of a text file"})
	n := 0
	for _, c := range d.Selected {
		if strings.HasSuffix(c.Name, "_read_text_file") {
			n++
		}
	}
	if n < 2 {
		t.Errorf("got %v, want several instances' read_text_file with collapse_duplicates off", selectedNames(d))
	}
}

func TestRouteInstancesTooCloseToTellApartRaiseACollision(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("home", instanceTools("home", ""))
	r.SetUpstream("work", instanceTools("work", ""))
	d := r.Route(context.Background(), Request{Query: "read the contents of a text file"})
	if len(d.Alerts) == 0 || d.Alerts[0].Kind != "collision" {
		t.Fatalf("alerts %+v, want a collision between the two instances", d.Alerts)
	}
	got := slices.Sorted(slices.Values(d.Alerts[0].Tools))
	if !slices.Equal(got, []string{"home_read_text_file", "work_read_text_file"}) {
		t.Errorf("collision names %v, want both instances' read_text_file", got)
	}
	if names := selectedNames(d); slices.Contains(names, "home_read_text_file") == slices.Contains(names, "work_read_text_file") {
		t.Errorf("selected %v, want exactly one instance's read_text_file", names)
	}
}

func TestRouterKnowsWhenInstancesShareTools(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("home", instanceTools("home", ""))
	if r.hasInstances() {
		t.Fatal("one upstream: reported as instances of one server")
	}
	r.SetUpstream("work", instanceTools("work", ""))
	if !r.hasInstances() {
		t.Fatal("two upstreams with the same tools: not reported as instances")
	}
	r.SetUpstream("work", instanceTools("work", "")) // a refresh changes nothing
	r.SetUpstream("home", nil)
	if r.hasInstances() {
		t.Error("after one instance left: still reported as instances")
	}
}

// BenchmarkRouteTenInstances routes over ten instances of one server, the
// ranking read deeper and collapsed; with collapse_duplicates off, as
// before instances were collapsed.
func BenchmarkRouteTenInstances(b *testing.B) {
	for _, collapse := range []bool{true, false} {
		b.Run(map[bool]string{true: "collapse", false: "no_collapse"}[collapse], func(b *testing.B) {
			p := DefaultFusePolicy()
			p.CollapseDuplicates = collapse
			r := NewRouter(RouterOptions{Fuse: &p})
			for i := range 10 {
				up := fmt.Sprintf("fs%d", i)
				r.SetUpstream(up, instanceTools(up, fmt.Sprintf("folder number %d", i)))
			}
			ctx := context.Background()
			for b.Loop() {
				if d := r.Route(ctx, Request{Query: "read the contents of a text file in folder number 3"}); len(d.Selected) == 0 {
					b.Fatal("nothing routed")
				}
			}
		})
	}
}

// TestRouteInstancesCollisionNamesTheInstances: two copies of one server
// (the same tools under two names) share their tools' texts, so their
// collision asks which instance holds what the user means, never which
// domain: the domains are only the copies' names.
func TestRouteInstancesCollisionNamesTheInstances(t *testing.T) {
	r := NewRouter(RouterOptions{})
	r.SetUpstream("home", instanceTools("home", ""))
	r.SetUpstream("work", instanceTools("work", ""))
	d := r.Route(context.Background(), Request{Query: "read the contents of a text file"})
	a := collisionOf(d)
	if a == nil {
		t.Fatalf("alerts %+v, want a collision between the two instances", d.Alerts)
	}
	if strings.Contains(a.Message, "domain") || !strings.Contains(a.Message, "instances of one server (") {
		t.Errorf("collision says %q, want the same tool on two instances named, not a question of domain", a.Message)
	}
}
