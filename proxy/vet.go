package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// vet checks the upstream's tools against their pins and scans them for
// poisoning. It returns the tools to expose and, by own name, why each
// other one is blocked. Pin problems go to logger, findings to findings.
func (h *Hub) vet(cfg UpstreamConfig, logger, findings *slog.Logger, tools []mcp.Tool) (kept []mcp.Tool, blocked map[string]string) {
	blocked = map[string]string{}
	contracts := make([]integrity.Contract, len(tools)) // decoded once: for the pins, the scan and the catalog
	mine := make(map[string]string, len(tools))
	for i, t := range tools {
		contracts[i] = integrity.ContractOf(t)
		mine[t.Name] = contracts[i].Hash
	}
	var verdicts map[string]integrity.Verdict
	pinsOK := h.opts.Pins != nil
	key := PinKey(cfg)
	if pinsOK {
		var err error
		verdicts, err = h.opts.Pins.CheckContracts(key, tools, contracts)
		switch {
		case err != nil && cfg.Transport == TransportBuiltin:
			// A built-in server's contracts come with this binary.
			logger.Warn("tool pins unreadable: serving the built-in server's tools unpinned", "err", err)
			pinsOK = false
		case err != nil:
			logger.Error("tool pins unreadable: hiding the upstream's tools", "err", err)
			for _, t := range tools {
				blocked[t.Name] = "its pin could not be checked: " + err.Error()
			}
			return nil, blocked
		}
	}
	cat := h.Catalog()
	held := map[string]string{} // blocked although pinned: quarantined
	var digests []digest
	prefix := exposedPrefix(cfg, tools)
	for i, t := range tools {
		named := cat.shadowCandidates(cfg.Name, t.Name, mine[t.Name], mine)
		if why := h.vetTool(key, findings, t, contracts[i], prefix+t.Name, verdicts[t.Name], named); why != "" {
			blocked[t.Name] = why
			if verdicts[t.Name] != integrity.VerdictChanged {
				held[t.Name] = why
			}
			continue
		}
		kept = append(kept, t)
		digests = append(digests, digest{contract: contracts[i].Hash, identifiers: contracts[i].Identifiers})
	}
	if len(kept) == len(tools) {
		kept = tools // nothing blocked: the listing holds one copy of the tools
	}
	h.noteVetted(cfg.Name, kept, digests)
	logPinSummary(findings, verdicts)
	if pinsOK {
		// Recorded for the pins CLI, which runs in another process.
		if err := h.opts.Pins.Hold(key, held); err != nil {
			logger.Warn("quarantine reasons not recorded", "err", err)
		}
	}
	return kept, blocked
}

// noteVetted keeps the digests of kept, by each listed tool's address, for
// the next rebuild, which then need not decode them again. Only an
// upstream's last vetting is kept.
func (h *Hub) noteVetted(upstream string, kept []mcp.Tool, digests []digest) {
	byTool := make(map[*mcp.Tool]digest, len(kept))
	for i := range kept {
		byTool[&kept[i]] = digests[i]
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.vetted == nil {
		h.vetted = map[string]map[*mcp.Tool]digest{}
	}
	h.vetted[upstream] = byTool
}

// takeVetted returns the digests noted since the last rebuild, by
// upstream, and forgets them.
func (h *Hub) takeVetted() map[string]map[*mcp.Tool]digest {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.vetted
	h.vetted = nil
	return v
}

// keepUnused notes again the digests in vetted of the upstreams whose
// offer does not hold the tools they were worked out for: vetted, but
// not yet connected when the rebuild read their listings. Without it a
// rebuild another upstream triggers in between would make the next one
// decode those tools again. Digests noted since the take are newer and
// stay.
func (h *Hub) keepUnused(vetted map[string]map[*mcp.Tool]digest, offers []offer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range offers {
		v := vetted[o.cfg.Name]
		if len(v) == 0 || len(o.Tools) > 0 && hasKey(v, &o.Tools[0]) {
			continue
		}
		if _, newer := h.vetted[o.cfg.Name]; newer {
			continue
		}
		if h.vetted == nil {
			h.vetted = map[string]map[*mcp.Tool]digest{}
		}
		h.vetted[o.cfg.Name] = v
	}
}

func hasKey[K comparable, V any](m map[K]V, k K) bool {
	_, ok := m[k]
	return ok
}

// logPinSummary logs one line for the tools pinned for the first time.
func logPinSummary(log *slog.Logger, verdicts map[string]integrity.Verdict) {
	var pinned []string
	for name, v := range verdicts {
		if v == integrity.VerdictNew {
			pinned = append(pinned, name)
		}
	}
	if len(pinned) > 0 {
		log.Info(fmt.Sprintf("pinned %d new tools", len(pinned)), "tools", summarizeNames(pinned))
	}
}

// summarizeNames lists up to 5 names, sorted, and how many more there are.
func summarizeNames(names []string) string {
	slices.Sort(names)
	if len(names) <= 5 {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ","), len(names)-5)
}

// vetTool judges one tool and returns why it is blocked, or "".
func (h *Hub) vetTool(pinKey string, log *slog.Logger, t mcp.Tool, c integrity.Contract, exposed string, v integrity.Verdict, others integrity.Named) string {
	log = log.With("tool", t.Name)
	approved := false
	if h.opts.Pins != nil {
		pin, _ := h.opts.Pins.Lookup(pinKey, t.Name)
		approved = pin.Approved()
		switch v {
		case integrity.VerdictNew:
			log.Debug("tool pinned", "hash", pin.Hash[:min(12, len(pin.Hash))])
		case integrity.VerdictChanged:
			log.Error("tool contract changed since it was pinned: blocked until approved",
				"exposed", exposed, "pending", pin.PendingExcerpt)
			return fmt.Sprintf("its definition changed since it was first seen (a possible rug pull); "+
				"if the change is expected, approve it with: mcp-router pins approve %s", exposed)
		}
	}
	findings := c.Scan(t, others)
	for _, f := range findings {
		log.Warn("tool poisoning suspected", "field", f.Field, "kind", f.Kind, "detail", f.Detail)
	}
	if h.opts.Poisoning.Blocks(findings, approved) {
		log.Error("tool quarantined", "findings", len(findings))
		return fmt.Sprintf("its definition looks poisoned (%s in %s); after review, approve it with: mcp-router pins approve %s",
			findings[0].Kind, findings[0].Field, exposed)
	}
	return ""
}

// shadowCandidates tells which names tool own of upstream must not name:
// other upstreams' tools, but for other instances of its own server
// (contracts.twins). Vetting and the catalog's check agree on this, so the
// outcome does not depend on connection order; names are looked up in the
// catalog's index, so vetting costs an upstream's own tools.
func (c *Catalog) shadowCandidates(upstream, own, contract string, mine map[string]string) integrity.Named {
	return func(name string, fold bool) bool {
		if c == nil {
			return false
		}
		for _, i := range c.named[strings.ToLower(name)] {
			o := &c.Tools[i]
			switch {
			case o.Upstream == upstream:
			case !fold && name != o.Name && name != o.Original:
			case contract != "" && o.Contract != "" && c.contracts[o.Upstream][own] == contract && mine[o.Original] == o.Contract:
				// a twin: another instance of the same server
			default:
				return true
			}
		}
		return false
	}
}

// blockedTool reports why an exposed name is blocked, if it is.
func (h *Hub) blockedTool(name string) (upstream, why string, ok bool) {
	for _, u := range h.set().list {
		l := u.Listing()
		prefix := exposedPrefix(u.Config(), l.Raw)
		for own, reason := range l.Blocked {
			if prefix+own == name {
				return u.Name(), reason, true
			}
		}
	}
	return "", "", false
}

// recheckLoop re-vets, until ctx ends, upstreams with blocked tools and,
// under quarantine, upstreams whose tool the catalog newly flags as
// shadowing: vetting scanned it before the other tools were known (SEC-10).
func (h *Hub) recheckLoop(ctx context.Context) {
	t := time.NewTicker(h.opts.RecheckEvery)
	defer t.Stop()
	acted := map[string]bool{} // shadowing warnings already re-vetted for
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		suspects := h.newShadowing(acted)
		changed := false
		for _, u := range h.set().list {
			if len(u.Listing().Blocked) > 0 || suspects[u.Name()] {
				changed = u.Revet() || changed
			}
		}
		if changed {
			h.rebuild()
		}
	}
}

// newShadowing returns the upstreams of the shadowing warnings not in
// acted, when the policy can block them, and leaves acted holding the
// current warnings.
func (h *Hub) newShadowing(acted map[string]bool) map[string]bool {
	suspects := map[string]bool{}
	now := map[string]bool{}
	for _, w := range h.Catalog().Warnings {
		if !w.Shadowing {
			continue
		}
		now[w.Text] = true
		if !acted[w.Text] && h.opts.Poisoning == integrity.Quarantine {
			suspects[w.Upstreams[0]] = true
		}
	}
	clear(acted)
	maps.Copy(acted, now)
	return suspects
}

// PinKey is the identity an upstream's tool pins are kept under: the
// server itself, not its local name, so that profiles sharing a state
// agree, two servers under one name never block each other, and a renamed
// upstream keeps its pins (class 8 in docs/reliability.md). It is
// "builtin:NAME ARGS...", "stdio:COMMAND ARGS..." (with " (in DIR)" for
// its own directory), or "url:URL" without user, password, query and
// fragment, which may hold credentials.
func PinKey(cfg UpstreamConfig) string {
	switch cfg.Transport {
	case TransportBuiltin:
		return "builtin:" + commandLine(cfg.Builtin, cfg.Args)
	case TransportStdio:
		key := "stdio:" + commandLine(cfg.Command, cfg.Args)
		if cfg.Cwd != "" {
			key += " (in " + cfg.Cwd + ")"
		}
		return key
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return "url:" + cfg.URL[:strings.IndexAny(cfg.URL+"?#", "?#")]
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return "url:" + u.String()
}

// commandLine joins a command and its arguments, quoting those that hold
// spaces, quotes or nothing.
func commandLine(command string, args []string) string {
	parts := make([]string, 0, 1+len(args))
	for _, a := range append([]string{command}, args...) {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// flagCaseVariants warns of exposed tool names, the proxy's own included,
// that differ only in case (BI-17): a model may call one for another.
func (c *Catalog) flagCaseVariants(reserved []string) {
	type named struct{ Name, Upstream string }                     // Upstream "" is the proxy
	groups := make(map[string][]named, len(reserved)+len(c.Tools)) // by lower-cased name
	for _, r := range reserved {
		groups[strings.ToLower(r)] = append(groups[strings.ToLower(r)], named{Name: r})
	}
	for _, t := range c.Tools {
		groups[strings.ToLower(t.Name)] = append(groups[strings.ToLower(t.Name)], named{t.Name, t.Upstream})
	}
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		g := groups[key]
		if len(g) < 2 {
			continue
		}
		slices.SortFunc(g, func(a, b named) int { return strings.Compare(a.Name, b.Name) })
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
