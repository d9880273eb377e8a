package routing

import (
	"fmt"
	"slices"
	"strings"
)

// A destructive tool needs more evidence than a shared word: on a request
// that names none of the words of its name but its verb ("clean up my
// desktop" and git_clean), it comes with its best-ranked non-destructive
// neighbours and a destructive alert.

// destructiveVerbs are the verbs of a tool's name that say it destroys
// or overwrites something, as stems.
var destructiveVerbs = []string{"delet", "remov", "clean", "drop", "reset", "forc", "purg", "wipe", "eras", "destroy"}

// Destructive tells whether a tool's annotations (MCP's four hints, nil
// when absent) say it destroys or overwrites: destructiveHint true and
// readOnlyHint not. All four hints at the spec's defaults are what mcp-go
// sends for a tool whose server said nothing, so they say nothing.
func Destructive(readOnly, destructive, idempotent, openWorld *bool) bool {
	is := func(p *bool, def bool) bool { return p != nil && *p == def }
	if is(readOnly, false) && is(destructive, true) && is(idempotent, false) && is(openWorld, true) {
		return false // all four at the defaults: what mcp-go sends for nothing
	}
	return destructive != nil && *destructive && (readOnly == nil || !*readOnly)
}

// neighbours is how many non-destructive tools a destructive one comes with.
const neighbours = 2

// words tokenises identifiers and requests alike: stems, no stop words.
var words = NewTokenizer(TokenizerOptions{})

// isDestructive tells that t's annotations say destructiveHint, or its
// name's verb destroys.
func isDestructive(t Tool) bool {
	return t.Destructive || slices.ContainsFunc(words.Tokens(t.Name), func(w string) bool { return slices.Contains(destructiveVerbs, w) })
}

// destructive tells that the catalog's tool name is destructive.
func (r *Router) destructive(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.destroys[name]
}

// namesObject tells that the request's terms name a word of t's name
// other than a destroying verb: its server or the thing it acts on.
func namesObject(t Tool, query []string) bool {
	return slices.ContainsFunc(words.Tokens(t.Name), func(w string) bool { return !slices.Contains(destructiveVerbs, w) && slices.Contains(query, w) })
}

// dropOffAction leaves out of the selection, beside a tool that does what
// the request asks, the destructive tools whose name's verb does otherwise
// (memory's deletes on "remember that Ada likes Go"): they do not serve it.
func (r *Router) dropOffAction(d *Decision, req Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.ContainsFunc(d.Selected, func(c Candidate) bool { return r.destroys[c.Name] }) {
		return // the request's verbs are read only when it matters
	}
	asked := actionsOf(req.Query + " " + req.Keywords)
	if slices.ContainsFunc(d.Selected, func(c Candidate) bool { return r.acts[c.Name]&asked != 0 }) {
		d.Selected = slices.DeleteFunc(d.Selected, func(c Candidate) bool {
			return r.destroys[c.Name] && r.acts[c.Name]&^asked != 0 && !slices.Contains(req.Needs, c.Name)
		})
	}
}

// guardDestructive adds, when a selected destructive tool's object is not
// named in the request nor the tool a stated need, the best-ranked
// non-destructive neighbours the selection lacks, within the fuse cap,
// and returns the alert; ok is false when there is none.
func (r *Router) guardDestructive(d *Decision, req Request) (Alert, bool) {
	if d.Abstained || len(d.Selected) == 0 {
		return Alert{}, false
	}
	var query, bare []string // query: the request's terms, read once a tool needs them
	safe := 0
	for _, c := range d.Selected {
		switch {
		case !r.destructive(c.Name):
			safe++
		case !slices.Contains(req.Needs, c.Name):
			if query == nil {
				query = words.Tokens(r.cleaned(req))
			}
			if t, _ := r.Tool(c.Name); !namesObject(t, query) {
				bare = append(bare, c.Name)
			}
		}
	}
	if len(bare) == 0 {
		return Alert{}, false
	}
	for _, c := range r.neighbours(d, bare[0]) {
		if safe >= neighbours || len(d.Selected) >= r.opts.Fuse.MaxTools {
			break
		}
		if slices.ContainsFunc(d.Selected, func(s Candidate) bool { return s.Name == c.Name }) || r.destructive(c.Name) ||
			(req.Exclude != nil && req.Exclude(c.Name)) || !r.opts.Fuse.Admits(c.Name, r.userFacing) {
			continue
		}
		d.Selected = append(d.Selected, c)
		safe++
	}
	msg := fmt.Sprintf("Routing alert: %s can delete or overwrite things, and the request %q names neither what it acts on nor its server. "+
		"Do not call it unless the user asked for exactly that; the other tools here may serve the request, or tell the user what is missing.",
		strings.Join(bare, ", "), req.Query)
	return Alert{Kind: "destructive", Tools: bare, Message: msg}, true
}

// neighbours are the tools a destructive one may come with: the ranked
// tools that match the request, then its own server's (discovery tools
// first, then by name), to look before anything is destroyed.
func (r *Router) neighbours(d *Decision, name string) []Candidate {
	out := slices.DeleteFunc(slices.Clone(d.Ranked), func(c Candidate) bool { return c.Coverage == 0 })
	t, _ := r.Tool(name)
	r.mu.Lock()
	disc := slices.Clone(r.discovery[t.Upstream])
	var own []string
	for n, o := range r.known {
		if o.Upstream == t.Upstream && !slices.Contains(disc, n) {
			own = append(own, n)
		}
	}
	r.mu.Unlock()
	slices.Sort(own)
	return append(out, r.candidates(append(disc, own...), d.Ranked)...)
}
