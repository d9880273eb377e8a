package proxy

// Health endpoints for the HTTP front door: /healthz (the process is alive
// and serving) and /readyz (every upstream is connected).

import (
	"encoding/json"
	"net/http"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// Probe is what a health endpoint answers.
type Probe int

const (
	// Alive answers 200 while the gateway serves (/healthz).
	Alive Probe = iota
	// Ready answers 200 when every upstream is connected, 503 otherwise
	// (/readyz).
	Ready
)

// HealthHandler answers one probe behind the same Host and Origin checks
// as Guard. When bearer tokens are configured, a request without a valid
// one gets only the status and counts; with one (or with no tokens
// configured) it also gets each upstream's name and state, and why the
// ones not connected are not. Only GET and HEAD are served.
func HealthHandler(hub *Hub, p Probe, opts frontdoor.Options) http.Handler {
	return &health{hub: hub, probe: p, door: frontdoor.NewChecks(opts)}
}

type health struct {
	hub   *Hub
	probe Probe
	door  *frontdoor.Checks
}

// healthReport is a probe's JSON body.
type healthReport struct {
	Status    string           `json:"status"` // alive, ready or not_ready
	Upstreams healthCounts     `json:"upstreams"`
	States    []upstreamHealth `json:"states,omitempty"` // with a valid token only
}

type healthCounts struct {
	Total     int `json:"total"`
	Connected int `json:"connected"`
	Starting  int `json:"starting"`
}

type upstreamHealth struct {
	Name   string `json:"name"`
	State  State  `json:"state"`
	Tools  int    `json:"tools"`
	Reason string `json:"reason,omitempty"` // why it is not connected
}

func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.door.CheckSite(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	// The upstreams' states are shown to those who may see the whole
	// gateway; a token served one profile gets the counts alone.
	caller, ok := h.door.RequestCaller(r)
	full := ok && caller.Wide
	rep, code := h.report(full)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if r.Method == http.MethodGet {
		_ = json.NewEncoder(w).Encode(rep)
	}
}

// report is the probe's answer; full adds the upstreams' names and states.
func (h *health) report(full bool) (healthReport, int) {
	statuses := h.hub.Status()
	rep := healthReport{Status: "alive", Upstreams: healthCounts{Total: len(statuses)}}
	for _, s := range statuses {
		uh := upstreamHealth{Name: s.Name, State: s.State, Tools: s.Tools}
		switch {
		case s.State == StateConnected:
			rep.Upstreams.Connected++
		case s.Err != "":
			uh.Reason = s.Err
		default:
			uh.Reason = s.Doing
		}
		if s.Starting {
			rep.Upstreams.Starting++
		}
		if full {
			rep.States = append(rep.States, uh)
		}
	}
	code := http.StatusOK
	if h.probe == Ready {
		rep.Status = "ready"
		if rep.Upstreams.Connected < rep.Upstreams.Total {
			rep.Status, code = "not_ready", http.StatusServiceUnavailable
		}
	}
	return rep, code
}
