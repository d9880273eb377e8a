package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/call"
	"github.com/mcp-router/mcp-router/state"
)

// status lists a gateway whose heartbeat is recent and whose process
// lives, and prunes rows of gateways that died without removing them.
func TestLiveGatewaysPrunesTheDead(t *testing.T) {
	mem := state.NewMemory()
	t.Cleanup(func() { mem.Close() })
	reg := mem.Gateways()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	snap, _ := json.Marshal(gatewaySnapshot{Calls: 3, Upstreams: []upstreamSnapshot{{Name: "calculator", State: "connected", Tools: 17}}})
	rows := []state.Gateway{
		{ID: "live", PID: os.Getpid(), Started: now.Add(-time.Hour), Heartbeat: now.Add(-heartbeatEvery), Snapshot: snap},
		{ID: "silent", PID: os.Getpid(), Started: now.Add(-time.Hour), Heartbeat: now.Add(-staleAfter - time.Second)},
		{ID: "gone", PID: 1 << 30, Started: now.Add(-time.Hour), Heartbeat: now},
	}
	for _, g := range rows {
		if err := reg.Beat(t.Context(), g); err != nil {
			t.Fatal(err)
		}
	}
	live, err := liveGateways(t.Context(), reg, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].ID != "live" || live[0].Snapshot == nil || live[0].Snapshot.Calls != 3 {
		t.Fatalf("live: %+v, want the live gateway with its snapshot", live)
	}
	left, _ := reg.Gateways(t.Context())
	if len(left) != 1 || left[0].ID != "live" {
		t.Errorf("rows left: %+v, want the dead pruned", left)
	}
	var out strings.Builder
	if err := printStatus(&env{stdout: &out}, live); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gateway pid", "calculator", "connected", "17", "calls served: 3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestStatusWithNoGatewaySaysSoAndSucceeds(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.yaml", "state_dir: "+dir+"/state\n"+calcProfile)
	out, _, err := runCLI(t, nil, "status", "--config", cfg)
	if err != nil || strings.TrimSpace(out) != "no gateway running" {
		t.Errorf("status: %v %q", err, out)
	}
	out, _, err = runCLI(t, nil, "status", "--json", "--config", cfg)
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("status --json: %v %q", err, out)
	}
}

// status says when a gateway runs the previous configuration because an
// edit of its file was refused, and which edits wait for a restart.
func TestStatusShowsARefusedConfigEdit(t *testing.T) {
	snap := &gatewaySnapshot{Config: &configSnapshot{
		Refused: "/home/me/profiles.yaml: yaml: line 3: did not find expected node content",
		Restart: []string{"limits", "profiles.default.routing"},
	}}
	var out strings.Builder
	if err := printStatus(&env{stdout: &out}, []gatewayStatus{{Snapshot: snap}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"config edit refused, the previous configuration runs: /home/me/profiles.yaml: yaml: line 3",
		"config edits that apply after a restart: limits, profiles.default.routing",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, out.String())
		}
	}
}

// An edit that breaks the profile file leaves the gateways serving on the configuration they loaded
// before; status still lists them, with the refused edit, and names the file's error, rather than
// failing on the file.
func TestStatusListsTheGatewaysWhenTheFileDoesNotLoad(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"MCP_ROUTER_STATE_DIR": filepath.Join(dir, "state")}
	st, err := state.Open(t.Context(), state.Options{Dir: vars["MCP_ROUTER_STATE_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := json.Marshal(gatewaySnapshot{Config: &configSnapshot{Refused: "p.yaml:2: YAML syntax"}})
	now := time.Now().UTC()
	if err := st.Gateways().Beat(t.Context(), state.Gateway{ID: "g", PID: os.Getpid(), Started: now, Heartbeat: now, Snapshot: snap}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	cfg := writeFile(t, dir, "p.yaml", "profiles:\n  default\n    upstreams: {}\n")
	out, stderr, err := runCLI(t, vars, "status", "--config", cfg)
	if err != nil {
		t.Fatalf("status: %v\n%s", err, stderr)
	}
	for _, want := range []string{fmt.Sprintf("gateway pid %d", os.Getpid()), "config edit refused, the previous configuration runs: p.yaml:2"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, cfg+":") {
		t.Errorf("status does not name the file's error:\n%s", stderr)
	}
}

// A call the client cancelled is not a failure: status shows it apart,
// in the table and in --json.
func TestStatusShowsCancelledCallsApart(t *testing.T) {
	hub := proxy.NewHub(proxy.Options{})
	defer hub.Close()
	m := proxy.NewMetrics()
	m.CallDone("calc", "add", 0, "")
	m.CallDone("calc", "add", 0, string(call.KindTimeout))
	m.CallDone("calc", "add", 0, string(call.KindCancelled))
	snap := snapshot(hub, m)
	var out strings.Builder
	if err := printStatus(&env{stdout: &out}, []gatewayStatus{{Snapshot: &snap}}); err != nil {
		t.Fatal(err)
	}
	if want := "calls served: 3 (1 failed, 1 cancelled)"; !strings.Contains(out.String(), want) {
		t.Errorf("status table lacks %q:\n%s", want, out.String())
	}
	js, err := json.Marshal(snap)
	if err != nil || !strings.Contains(string(js), `"failed":1,"cancelled":1`) {
		t.Errorf("status --json: got %s (%v), want failed 1 and cancelled 1", js, err)
	}
}
