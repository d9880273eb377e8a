package proxy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// vet checks an upstream's tools against their pins and scans them for
// poisoning. It returns the tools to expose and, by the upstream's own tool
// name, why each other one is blocked. Without a pin store only the scan
// applies.
func (h *Hub) vet(u *upstream, tools []mcp.Tool) (kept []mcp.Tool, blocked map[string]string) {
	blocked = map[string]string{}
	var verdicts map[string]integrity.Verdict
	if h.opts.Pins != nil {
		var err error
		verdicts, err = h.opts.Pins.Check(u.cfg.Name, tools)
		if err != nil {
			u.logger.Error("tool pins unreadable: hiding the upstream's tools", "err", err)
			for _, t := range tools {
				blocked[t.Name] = "its pin could not be checked: " + err.Error()
			}
			return nil, blocked
		}
	}
	others := h.otherToolNames(u.cfg.Name)
	for _, t := range tools {
		if why := h.vetTool(u, t, verdicts[t.Name], others); why != "" {
			blocked[t.Name] = why
			continue
		}
		kept = append(kept, t)
	}
	return kept, blocked
}

func (h *Hub) vetTool(u *upstream, t mcp.Tool, v integrity.Verdict, others []string) string {
	log := u.logger.With("tool", t.Name)
	approved := false
	if h.opts.Pins != nil {
		pin, _ := h.opts.Pins.Lookup(u.cfg.Name, t.Name)
		approved = pin.Approved()
		switch v {
		case integrity.VerdictNew:
			log.Info("tool pinned", "hash", pin.Hash[:min(12, len(pin.Hash))])
		case integrity.VerdictChanged:
			log.Error("tool contract changed since it was pinned: blocked until approved",
				"exposed", u.cfg.Prefix+t.Name, "pending", pin.PendingExcerpt)
			return fmt.Sprintf("its definition changed since it was first seen (a possible rug pull); "+
				"if the change is expected, approve it with: mcp-router pins approve %s", u.cfg.Prefix+t.Name)
		}
	}
	findings := integrity.Scan(t, others)
	for _, f := range findings {
		log.Warn("tool poisoning suspected", "field", f.Field, "kind", f.Kind, "detail", f.Detail)
	}
	if h.opts.Poisoning.Blocks(findings, approved) {
		log.Error("tool quarantined", "findings", len(findings))
		return fmt.Sprintf("its definition looks poisoned (%s in %s); after review, approve it with: mcp-router pins approve %s",
			findings[0].Kind, findings[0].Field, u.cfg.Prefix+t.Name)
	}
	return ""
}

// otherToolNames are the tool names of every other upstream, exposed and
// own, for the shadowing check.
func (h *Hub) otherToolNames(upstream string) []string {
	var out []string
	for _, t := range h.Catalog().Tools {
		if t.Upstream != upstream {
			out = append(out, t.Name, t.Original)
		}
	}
	return out
}

// blockedTool reports why an exposed name is blocked, if it is.
func (h *Hub) blockedTool(name string) (upstream, why string, ok bool) {
	for _, u := range h.upstreams {
		l := u.listing()
		for own, reason := range l.blocked {
			if u.cfg.Prefix+own == name {
				return u.cfg.Name, reason, true
			}
		}
	}
	return "", "", false
}

// recheckLoop re-vets upstreams with blocked tools until ctx ends.
func (h *Hub) recheckLoop(ctx context.Context) {
	t := time.NewTicker(h.opts.RecheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed := false
		for _, u := range h.upstreams {
			changed = u.revet() || changed
		}
		if changed {
			h.rebuild()
		}
	}
}

// revet checks the last listing's blocked tools again and reports whether
// any was released.
func (u *upstream) revet() bool {
	u.mu.Lock()
	offer := u.offer
	u.mu.Unlock()
	if len(offer.blocked) == 0 {
		return false
	}
	kept, blocked := u.hub.vet(u, offer.raw)
	if maps.Equal(blocked, offer.blocked) {
		return false
	}
	u.mu.Lock()
	u.offer.tools, u.offer.blocked = kept, blocked
	u.mu.Unlock()
	u.logger.Info("blocked tools re-checked", "blocked", slices.Sorted(maps.Keys(blocked)))
	return true
}
