package proxy

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/internal/editdist"
	"github.com/mcp-router/mcp-router/proxy/apps"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/proxy/internal/upstream"
	"github.com/mcp-router/mcp-router/routing"
)

// namePattern is what a client accepts as a tool name (Claude's limit).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// Tool is one catalog entry: an upstream tool under its exposed name.
type Tool struct {
	Name     string // exposed name, unique in the catalog
	Upstream string
	Domain   string
	Original string   // the upstream's own name
	Def      mcp.Tool // the definition shown to clients, under Name
	// Server is what the upstream is for, from its configured description.
	Server string
	// Destructive says the upstream's own hints mark the tool destructive:
	// a claim that only makes the gateway more careful, so it is believed
	// of any upstream, unless read_only_tools vouches for the tool.
	Destructive bool
	// Contract is the hash of the upstream's own tool as sent: equal for
	// the same tool on several instances of one server.
	Contract string
	// identifiers are the words of its texts that could name a tool, for
	// the shadowing check.
	identifiers string
}

// digest is what a catalog keeps of a listed definition's contract,
// worked out once rather than at each rebuild.
type digest struct {
	contract    string
	identifiers string
}

func digestOf(t mcp.Tool) digest {
	c := integrity.ContractOf(t)
	return digest{contract: c.Hash, identifiers: c.Identifiers}
}

// Prompt is an upstream prompt under its exposed name.
type Prompt struct {
	Name     string
	Upstream string
	Original string
	Def      mcp.Prompt
}

// Resource is an upstream resource. URIs are not renamed, except an MCP
// Apps view's (ui://), which apps.URI makes unique to its upstream.
type Resource struct {
	Upstream string
	Def      mcp.Resource
}

// ResourceTemplate is an upstream resource template.
type ResourceTemplate struct {
	Upstream string
	Def      mcp.ResourceTemplate
}

// Catalog is an immutable snapshot of everything the upstreams offer,
// under exposed names.
type Catalog struct {
	Tools     []Tool // sorted by name
	Prompts   []Prompt
	Resources []Resource
	Templates []ResourceTemplate
	// Problems lists what was left out: name collisions, invalid names.
	Problems []Problem
	// Warnings lists what was kept but may mislead a model: case variants,
	// possible shadowing.
	Warnings []Problem
	// Notes says how names were shaped (a default prefix not added twice).
	Notes []string
	// AppOnly are tools their server marks for its app's interface only:
	// never shown to the model, and refused when it calls them.
	AppOnly []Tool
	// quarantined are the URIs of resources left out for their texts:
	// read through no template, as they are listed by no one.
	quarantined map[string]bool

	byName map[string]int
	// named indexes Tools by lower-cased exposed and own name; contracts
	// holds their contracts, for vetting and shadowing checks.
	named     map[string][]int32
	contracts contracts
	// hashed are the digests of the listed definitions, by address: a
	// listing is never changed in place, so only new ones are decoded.
	hashed map[*mcp.Tool]digest
	// defSums are the sums of Tools' definitions as JSON, by index, that
	// the hub's signature took before it stored the catalog; nil before.
	defSums []uint64
}

// appOnlyTool looks name up among the tools meant for apps only.
func (c *Catalog) appOnlyTool(name string) (Tool, bool) {
	if c == nil {
		return Tool{}, false
	}
	i := slices.IndexFunc(c.AppOnly, func(t Tool) bool { return t.Name == name })
	if i < 0 {
		return Tool{}, false
	}
	return c.AppOnly[i], true
}

// Has reports whether the catalog has a tool of that exposed name.
func (c *Catalog) Has(name string) bool {
	_, ok := c.Tool(name)
	return ok
}

// Tool looks a tool up by exposed name.
func (c *Catalog) Tool(name string) (Tool, bool) {
	if c == nil {
		return Tool{}, false
	}
	i, ok := c.byName[name]
	if !ok {
		return Tool{}, false
	}
	return c.Tools[i], true
}

// Problem is something an upstream offered that the catalog left out or,
// in Catalog.Warnings, kept but flagged.
type Problem struct {
	Text      string
	Collision bool // two upstreams (or an upstream and the proxy) want one name
	// Upstreams are those involved, the one that kept the name (or the
	// upstream of Tools[0]) first; "" is the proxy.
	Upstreams []string
	// Tools are the exposed names a warning is about, the naming tool first.
	Tools []string
	// Shadowing marks a warning that a tool's texts name another upstream's
	// tool (SEC-10).
	Shadowing bool
}

func (c *Catalog) problem(collision bool, format string, args ...any) {
	c.Problems = append(c.Problems, Problem{Text: fmt.Sprintf(format, args...), Collision: collision})
}

// offer is one upstream's listing with the settings that shape its names.
type offer struct {
	cfg UpstreamConfig
	upstream.Listing
	// vetted are the digests vetting worked out, by listed tool's address.
	vetted map[*mcp.Tool]digest
}

// buildCatalog names every upstream tool and rejects collisions. A name
// the previous catalog gave an upstream stays with it, so a tool that
// appears later never shadows an existing one; otherwise upstreams claim
// names in the order given (sorted by name).
func buildCatalog(prev *Catalog, offers []offer, reserved []string) *Catalog {
	n := 0
	for _, o := range offers {
		n += len(o.Tools)
	}
	c := &Catalog{Tools: make([]Tool, 0, n), byName: make(map[string]int, n), hashed: make(map[*mcp.Tool]digest, n)}
	var hashed map[*mcp.Tool]digest
	if prev != nil {
		hashed = prev.hashed
	}
	owner := make(map[string]string) // exposed name -> upstream
	for _, r := range reserved {
		owner[r] = ""
	}
	offered := make(map[string]bool, n)     // "upstream\x00exposed name"
	prefixes := make([]string, len(offers)) // of each upstream's tool names
	for i, o := range offers {
		prefixes[i] = exposedPrefix(o.cfg, o.Raw)
		for _, t := range o.Tools {
			offered[o.cfg.Name+"\x00"+prefixes[i]+t.Name] = true
		}
	}
	if prev != nil {
		for _, t := range prev.Tools {
			if offered[t.Upstream+"\x00"+t.Name] {
				owner[t.Name] = t.Upstream
			}
		}
	}
	for i, o := range offers {
		cfg := o.cfg
		if cfg.Prefix = prefixes[i]; cfg.Prefix != o.cfg.Prefix {
			c.Notes = append(c.Notes, fmt.Sprintf("upstream %s: every tool already starts with %q, so that default prefix is not added again",
				cfg.Name, o.cfg.Prefix))
		}
		for j := range o.Tools {
			t := &o.Tools[j]
			if appOnly(*t) {
				c.AppOnly = append(c.AppOnly, Tool{Name: cfg.Prefix + t.Name, Upstream: cfg.Name, Original: t.Name})
				continue
			}
			d, ok := hashed[t]
			if !ok {
				d, ok = o.vetted[t]
			}
			if !ok {
				d = digestOf(*t)
			}
			c.hashed[t] = d
			c.addTool(cfg, *t, d, owner, longestName(o.Raw))
		}
		c.addPrompts(o)
		c.addResources(o)
	}
	slices.SortFunc(c.Tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	c.named = make(map[string][]int32, 2*len(c.Tools))
	for i, t := range c.Tools {
		c.byName[t.Name] = i
		c.named[strings.ToLower(t.Name)] = append(c.named[strings.ToLower(t.Name)], int32(i))
		if own := strings.ToLower(t.Original); own != strings.ToLower(t.Name) {
			c.named[own] = append(c.named[own], int32(i))
		}
	}
	c.contracts = contractsOf(c.Tools)
	c.flagCaseVariants(reserved)
	c.flagShadowing()
	return c
}

func (c *Catalog) addTool(cfg UpstreamConfig, t mcp.Tool, d digest, owner map[string]string, longest int) {
	name := cfg.Prefix + t.Name
	if !namePattern.MatchString(name) {
		c.problem(false, "upstream %s: tool %q left out: exposed name %q must match %s%s",
			cfg.Name, t.Name, name, namePattern, prefixAdvice(cfg, t.Name, name, longest))
		return
	}
	if who, taken := owner[name]; taken && who != cfg.Name {
		c.Problems = append(c.Problems, Problem{Text: collision(name, who, cfg.Name), Collision: true,
			Upstreams: []string{who, cfg.Name}})
		return
	}
	if _, dup := c.byName[name]; dup {
		c.problem(false, "upstream %s: tool name %q listed twice", cfg.Name, name)
		return
	}
	owner[name] = cfg.Name
	c.byName[name] = len(c.Tools)
	def, dropped := exposedDef(cfg, t, name)
	for _, k := range dropped {
		c.Warnings = append(c.Warnings, Problem{Upstreams: []string{cfg.Name}, Text: fmt.Sprintf(
			"upstream %s: tool %q: _meta.%s is not a ui:// URI; dropped from its _meta (the tool is kept)", cfg.Name, t.Name, k)})
	}
	c.Tools = append(c.Tools, Tool{
		Name: name, Upstream: cfg.Name, Domain: cfg.EffectiveDomain(), Original: t.Name, Def: def,
		Server: cfg.Description, Contract: d.contract, identifiers: d.identifiers, Destructive: destructiveAsSent(cfg, t),
	})
}

// destructiveAsSent tells that t's own hints mark it destructive and the
// configuration does not vouch for it as read-only.
func destructiveAsSent(cfg UpstreamConfig, t mcp.Tool) bool {
	a := t.Annotations
	return routing.Destructive(a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint) &&
		!slices.Contains(cfg.AnnotationTrust().ReadOnly, t.Name)
}

func collision(name, kept, rejected string) string {
	if kept == "" {
		return fmt.Sprintf("upstream %s: tool %q collides with the proxy's own tool of that name; "+
			"set a prefix for upstream %s", rejected, name, rejected)
	}
	return fmt.Sprintf("tool name %q is exposed by both upstream %s and upstream %s; "+
		"give one of them a distinct prefix (upstreams.%s.prefix)", name, kept, rejected, rejected)
}

// exposedDef is the upstream's definition under its exposed name, its
// schema carried raw, with only the annotations the configuration lets the
// gateway believe (SEC-12: no client skips a confirmation on an untrusted
// read-only claim). It also returns the _meta keys of views dropped for
// not naming a ui:// URI.
func exposedDef(cfg UpstreamConfig, t mcp.Tool, name string) (mcp.Tool, []string) {
	def := t
	def.Name = name
	def.Annotations = cfg.AnnotationTrust().Annotations(t)
	var dropped []string
	def.Meta, dropped = apps.ToolMeta(cfg.Name, t.Meta) // its view's URI as the catalog lists it
	if def.RawInputSchema == nil {
		def.RawInputSchema = rawSchema(t.InputSchema)
		def.InputSchema = mcp.ToolInputSchema{}
	}
	if def.RawOutputSchema == nil && t.OutputSchema.Type != "" {
		def.RawOutputSchema, _ = json.Marshal(t.OutputSchema)
		def.OutputSchema = mcp.ToolOutputSchema{}
	}
	return def, dropped
}

// rawSchema marshals an input schema, defaulting to an empty object schema
// (clients reject a tool without one).
func rawSchema(s mcp.ToolInputSchema) json.RawMessage {
	if s.Type == "" {
		s.Type = "object"
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return b
}

func (c *Catalog) addPrompts(o offer) {
	for _, p := range o.Prompts {
		name := o.cfg.Prefix + p.Name
		def := p
		def.Name = name
		c.Prompts = append(c.Prompts, Prompt{Name: name, Upstream: o.cfg.Name, Original: p.Name, Def: def})
	}
}

func (c *Catalog) addResources(o offer) {
	up := o.cfg.Name
	for _, r := range o.Resources {
		r.URI = apps.URI(up, r.URI)
		if c.hasResource(r.URI) {
			c.problem(false, "upstream %s: resource %q left out: another upstream offers the same URI",
				up, r.URI)
			continue
		}
		c.Resources = append(c.Resources, Resource{Upstream: up, Def: r})
	}
	for _, uri := range o.Withheld {
		if c.quarantined == nil {
			c.quarantined = map[string]bool{}
		}
		c.quarantined[apps.URI(up, uri)] = true
	}
	for _, t := range o.Templates {
		t.URITemplate = apps.Template(up, t.URITemplate)
		c.Templates = append(c.Templates, ResourceTemplate{Upstream: up, Def: t})
	}
	c.addViews(o)
}

// addViews lists the MCP Apps views o's tools name that its resources do
// not (a server may leave a view out of resources/list).
func (c *Catalog) addViews(o offer) {
	for _, t := range o.Tools {
		for _, uri := range apps.ViewURIs(t.Meta) {
			if uri = apps.URI(o.cfg.Name, uri); !c.hasResource(uri) && c.resourceOwner(uri) == "" {
				c.Resources = append(c.Resources, Resource{Upstream: o.cfg.Name,
					Def: mcp.NewResource(uri, uri, mcp.WithMIMEType(apps.MIMEType))})
			}
		}
	}
}

func (c *Catalog) hasResource(uri string) bool {
	return slices.ContainsFunc(c.Resources, func(r Resource) bool { return r.Def.URI == uri })
}

// Prompt looks a prompt up by exposed name.
func (c *Catalog) Prompt(name string) (Prompt, bool) {
	if c == nil {
		return Prompt{}, false
	}
	i := slices.IndexFunc(c.Prompts, func(p Prompt) bool { return p.Name == name })
	if i < 0 {
		return Prompt{}, false
	}
	return c.Prompts[i], true
}

// maxNameLen is the longest tool name a client accepts (namePattern).
const maxNameLen = 64

// exposedPrefix is the prefix the upstream's tool names get: Prefix,
// except a default prefix ("<name>_") every one of its tools already
// starts with, which is not added again (slack_post_message rather than
// slack_slack_post_message).
func exposedPrefix(u UpstreamConfig, tools []mcp.Tool) string {
	if !u.DefaultPrefix || u.Prefix == "" || len(tools) == 0 {
		return u.Prefix
	}
	for _, t := range tools {
		if !strings.HasPrefix(t.Name, u.Prefix) {
			return u.Prefix
		}
	}
	return ""
}

func longestName(tools []mcp.Tool) int {
	n := 0
	for _, t := range tools {
		n = max(n, len(t.Name))
	}
	return n
}

// prefixAdvice says, for an exposed name over a client's limit, which
// prefix would fit every tool of the upstream; "" when the name is invalid
// for another reason.
func prefixAdvice(cfg UpstreamConfig, own, name string, longest int) string {
	if len(name) <= maxNameLen {
		return ""
	}
	if !namePattern.MatchString(own) {
		return fmt.Sprintf("; the tool's own name is %d characters, so no prefix makes it fit: leave it out with upstreams.%s.tools.deny",
			len(own), cfg.Name)
	}
	fit := maxNameLen - longest
	if fit < 2 || cfg.Prefix == "" {
		return fmt.Sprintf(`; set upstreams.%s.prefix: "" to expose it as %q`, cfg.Name, own)
	}
	short := strings.TrimRight(cfg.Prefix, "_-.")
	short = short[:min(len(short), fit-1)] + "_"
	return fmt.Sprintf(`; the prefix %q is %d characters and the longest tool name of upstream %s is %d: `+
		`a prefix of at most %d characters fits every tool, e.g. upstreams.%s.prefix: %q (or prefix: "")`,
		cfg.Prefix, len(cfg.Prefix), cfg.Name, longest, fit, cfg.Name, short)
}

// appOnly reports a tool its server marks for its app's interface only:
// _meta.ui.visibility (MCP Apps) is an array without "model".
func appOnly(t mcp.Tool) bool {
	if t.Meta == nil {
		return false
	}
	ui, ok := t.Meta.AdditionalFields["ui"].(map[string]any)
	if !ok {
		return false
	}
	switch vis := ui["visibility"].(type) {
	case []any: // decoded from JSON
		return !slices.Contains(vis, any("model"))
	case []string: // an in-process server's own value
		return !slices.Contains(vis, "model")
	}
	return false
}

// Bounds of Catalog.Suggest.
const (
	maxSuggestions = 3
	// maxSuggestName is the longest unknown name looked up (edit distance
	// is quadratic).
	maxSuggestName = 2 * maxNameLen
)

// Suggest returns up to three catalog tool names close to name, for a "did
// you mean": first the tools whose own name name is or ends with (across
// prefixes), then the names within a few edits of it, closest first.
func (c *Catalog) Suggest(name string) []string {
	if c == nil || name == "" || len(name) > maxSuggestName {
		return nil
	}
	type match struct {
		name        string
		class, dist int
	}
	lower := strings.ToLower(name)
	limit := max(2, len(name)/3)
	var found []match
	for _, t := range c.Tools {
		own := strings.ToLower(t.Original)
		if own == lower || strings.HasSuffix(lower, "_"+own) {
			found = append(found, match{t.Name, 0, editdist.Distance(lower, strings.ToLower(t.Name), maxSuggestName)})
			continue
		}
		if d := editdist.Distance(lower, strings.ToLower(t.Name), limit); d <= limit {
			found = append(found, match{t.Name, 1, d})
		}
	}
	slices.SortFunc(found, func(a, b match) int {
		return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.dist, b.dist), strings.Compare(a.name, b.name))
	})
	out := make([]string, 0, min(len(found), maxSuggestions))
	for _, m := range found[:min(len(found), maxSuggestions)] {
		out = append(out, m.name)
	}
	return out
}

// explainUnknown is what follows "unknown tool" for a name not in the
// catalog: that its server keeps it for its app, or the closest names.
func (c *Catalog) explainUnknown(name string) string {
	if _, ok := c.appOnlyTool(name); ok {
		return ": " + ErrAppOnly.Error()
	}
	return didYouMean(c.Suggest(name))
}

// didYouMean is the "; did you mean ...?" ending for an unknown name, or "".
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", strings.Join(names, ", "))
}
