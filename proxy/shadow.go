package proxy

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// flagCaseVariants warns of exposed tool names, the proxy's own included,
// that differ only in case (BI-17): a model may call one for another.
func (c *Catalog) flagCaseVariants(reserved []string) {
	groups := make(map[string][]Tool) // lower-cased name -> tools; Upstream "" is the proxy
	for _, r := range reserved {
		groups[strings.ToLower(r)] = append(groups[strings.ToLower(r)], Tool{Name: r})
	}
	for _, t := range c.Tools {
		groups[strings.ToLower(t.Name)] = append(groups[strings.ToLower(t.Name)], t)
	}
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		g := groups[key]
		if len(g) < 2 {
			continue
		}
		slices.SortFunc(g, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
		p := Problem{}
		described := make([]string, len(g))
		for i, t := range g {
			described[i] = fmt.Sprintf("%q (%s)", t.Name, whose(t.Upstream))
			p.Tools = append(p.Tools, t.Name)
			if !slices.Contains(p.Upstreams, t.Upstream) {
				p.Upstreams = append(p.Upstreams, t.Upstream)
			}
		}
		p.Text = fmt.Sprintf("tool names %s differ only in case: all are exposed, as names are case-sensitive, "+
			"but a model may call one for another (possible shadowing); consider tools.deny or a prefix",
			strings.Join(described, " and "))
		c.Warnings = append(c.Warnings, p)
	}
}

func whose(upstream string) string {
	if upstream == "" {
		return "the proxy's own tool"
	}
	return "upstream " + upstream
}

// flagShadowing warns of tools whose texts name another upstream's tool
// (SEC-10). Vetting scans for it too, but against the catalog of the
// moment; this runs over every tool at each rebuild.
func (c *Catalog) flagShadowing() {
	names := make([]string, 0, 2*len(c.Tools))
	upstreams := make(map[string]bool)
	for _, t := range c.Tools {
		upstreams[t.Upstream] = true
		names = append(names, t.Name)
		if !strings.EqualFold(t.Original, t.Name) {
			names = append(names, t.Original)
		}
	}
	if len(upstreams) < 2 {
		return
	}
	set := integrity.NewToolNames(names)
	for _, t := range c.Tools {
		if p, ok := c.shadowingOf(t, set.MentionsIn(t.identifiers, t.Name, t.Original)); ok {
			c.Warnings = append(c.Warnings, p)
		}
	}
}

// shadowingOf is the warning for t when a name it mentions is a tool of
// another upstream that is not an instance of t's server.
func (c *Catalog) shadowingOf(t Tool, mentioned []string) (Problem, bool) {
	p := Problem{Upstreams: []string{t.Upstream}, Tools: []string{t.Name}, Shadowing: true}
	have := c.contracts
	var named []string
	for _, m := range mentioned {
		var theirs []string
		for _, i := range c.named[strings.ToLower(m)] {
			o := &c.Tools[i]
			if o.Upstream == t.Upstream || have.twins(t.Upstream, t.Original, t.Contract, o.Upstream, o.Original, o.Contract) {
				continue
			}
			theirs = append(theirs, fmt.Sprintf("%s of upstream %s", o.Name, o.Upstream))
			p.Tools = append(p.Tools, o.Name)
			if !slices.Contains(p.Upstreams, o.Upstream) {
				p.Upstreams = append(p.Upstreams, o.Upstream)
			}
		}
		if len(theirs) > 0 {
			named = append(named, fmt.Sprintf("%q (%s)", m, strings.Join(theirs, ", ")))
		}
	}
	if len(named) == 0 {
		return Problem{}, false
	}
	p.Text = fmt.Sprintf("upstream %s: tool %q names another upstream's tool: %s; possible cross-server shadowing "+
		"(a description can steer how the model uses another server's tools)", t.Upstream, t.Name, strings.Join(named, ", "))
	return p, true
}

// contracts are the contracts of upstreams' tools, by upstream and own
// name.
type contracts map[string]map[string]string

func contractsOf(tools []Tool) contracts {
	out := contracts{}
	for _, t := range tools {
		if out[t.Upstream] == nil {
			out[t.Upstream] = map[string]string{}
		}
		out[t.Upstream][t.Original] = t.Contract
	}
	return out
}

// twins reports whether tool own of upstream a naming tool theirs of
// upstream b is one server naming its own tool, seen twice: b has own and
// a has theirs, with the same contracts (ten filesystem servers on ten
// folders each name their own read_text_file). An upstream cannot pass
// for another's instance without exposing, word for word, the tools it
// names.
func (c contracts) twins(a, own, ownContract, b, theirs, theirContract string) bool {
	if ownContract == "" || theirContract == "" {
		return false
	}
	bc, ok := c[b][own]
	if !ok || bc != ownContract {
		return false
	}
	ac, ok := c[a][theirs]
	return ok && ac == theirContract
}
