package proxy

import (
	"errors"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHubApplyChangesOnlyTheEditedUpstreams: an added upstream joins, a
// removed one's tools go and its child ends, a changed one runs again
// under its new configuration, and an untouched one keeps its process.
func TestHubApplyChangesOnlyTheEditedUpstreams(t *testing.T) {
	keep, edit, gone := stdioFake("keep"), stdioFake("edit"), stdioFake("gone")
	h := startHub(t, keep, edit, gone)
	keepPID := callText(t, h, "keep_pid", nil)
	editPID := callText(t, h, "edit_pid", nil)
	gonePID := callText(t, h, "gone_pid", nil)

	edited := stdioFake("edit")
	edited.Env["EDITED"] = "yes"
	change, err := h.Apply(t.Context(), []UpstreamConfig{stdioFake("keep"), edited, stdioFake("added")})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := Change{Added: []string{"added"}, Removed: []string{"gone"}, Restarted: []string{"edit"}}
	if diff := cmp.Diff(want, change); diff != "" {
		t.Errorf("Apply's change (-want +got):\n%s", diff)
	}
	if _, ok := h.Catalog().Tool("gone_echo"); ok {
		t.Error("the removed upstream's tool gone_echo is still in the catalog after Apply")
	}
	if pid, _ := strconv.Atoi(gonePID); !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		t.Errorf("the removed upstream's child %d still runs after Apply", pid)
	}
	// Tools of started upstreams are waited for, as at start.
	if got := callText(t, h, "added_echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Errorf("added_echo: got %q, want hi", got)
	}
	if got := callText(t, h, "edit_getenv", map[string]any{"name": "EDITED"}); got != "yes" {
		t.Errorf("edit_getenv EDITED: got %q, want yes (the new configuration)", got)
	}
	if got := callText(t, h, "edit_pid", nil); got == editPID {
		t.Errorf("the edited upstream kept its process %s", got)
	}
	if got := callText(t, h, "keep_pid", nil); got != keepPID {
		t.Errorf("the untouched upstream's process: got %s, want %s (it was restarted)", got, keepPID)
	}
	var names []string
	for _, s := range h.Status() {
		names = append(names, s.Name)
		if s.Name == "keep" && s.Restarts != 0 {
			t.Errorf("keep restarted %d times", s.Restarts)
		}
	}
	if want := []string{"added", "edit", "keep"}; !slices.Equal(names, want) {
		t.Errorf("Status names: got %v, want %v", names, want)
	}
}

// TestHubApplyUnchangedDoesNothing: the same configuration, even with a
// new authorizer-free copy of each entry, changes nothing and tells no
// listener.
func TestHubApplyUnchangedDoesNothing(t *testing.T) {
	h := startHub(t, stdioFake("alpha"), builtinFake("beta"))
	changes := make(chan *Catalog, 8)
	h.Follow(func(c *Catalog) { changes <- c })
	<-changes // Follow's first call: the catalog as it is
	change, err := h.Apply(t.Context(), []UpstreamConfig{builtinFake("beta"), stdioFake("alpha")})
	if err != nil || !change.Empty() {
		t.Fatalf("Apply of the same upstreams: got %+v, %v; want no change", change, err)
	}
	select {
	case <-changes:
		t.Error("a catalog change was announced for an Apply that changed nothing")
	default:
	}
}

// TestHubApplyRetriesAFailedUpstream: an Apply (a reload) that keeps a
// failed upstream makes it try again at once, whatever wait it was in.
func TestHubApplyRetriesAFailedUpstream(t *testing.T) {
	typo := UpstreamConfig{Name: "typo", Transport: TransportStdio, Command: "mcp-router-test-no-such-command"}
	h := startHub(t, typo)
	if _, err := h.Apply(t.Context(), []UpstreamConfig{typo}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); h.Status()[0].Restarts == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) { // a guard against a hang: the wait it was in is 5 minutes
			t.Fatalf("no retry after Apply: %+v", h.Status()[0])
		}
	}
}

func TestHubApplyRefusesDuplicateNames(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	if _, err := h.Apply(t.Context(), []UpstreamConfig{builtinFake("beta"), builtinFake("beta")}); err == nil {
		t.Fatal("Apply with beta twice: no error")
	}
	if _, ok := h.Catalog().Tool("alpha_echo"); !ok {
		t.Error("a refused Apply changed the catalog")
	}
}

func TestHubApplyAfterCloseFails(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	h.Close()
	if _, err := h.Apply(t.Context(), []UpstreamConfig{builtinFake("beta")}); !errors.Is(err, ErrHubNotRunning) {
		t.Fatalf("Apply after Close: got %v, want ErrHubNotRunning", err)
	}
}

func TestSameUpstreamComparesEveryField(t *testing.T) {
	base := stdioFake("alpha")
	for name, edit := range map[string]func(*UpstreamConfig){
		"args":        func(c *UpstreamConfig) { c.Args = []string{"--x"} },
		"env value":   func(c *UpstreamConfig) { c.Env = map[string]string{"MCP_ROUTER_FAKE_UPSTREAM": "other"} },
		"prefix":      func(c *UpstreamConfig) { c.Prefix = "" },
		"timeout":     func(c *UpstreamConfig) { c.Timeout = time.Second },
		"deny":        func(c *UpstreamConfig) { c.Deny = []string{"echo"} },
		"description": func(c *UpstreamConfig) { c.Description = "notes" },
	} {
		c := stdioFake("alpha")
		edit(&c)
		if SameUpstream(base, c) {
			t.Errorf("%s changed: SameUpstream says the same", name)
		}
	}
	if !SameUpstream(base, stdioFake("alpha")) {
		t.Error("two equal configurations: SameUpstream says different")
	}
}

// TestHubApplyRestartKeepsTheCatalogSteady: an upstream restarted for an
// edit that leaves its server and tools as they were is listed throughout,
// so no client hears of a change.
func TestHubApplyRestartKeepsTheCatalogSteady(t *testing.T) {
	h := startHub(t, stdioFake("alpha"), builtinFake("beta"))
	changes := make(chan *Catalog, 8)
	h.Follow(func(c *Catalog) { changes <- c })
	<-changes // Follow's first call: the catalog as it is
	edited := stdioFake("alpha")
	edited.Env["EDITED"] = "yes"
	change, err := h.Apply(t.Context(), []UpstreamConfig{edited, builtinFake("beta")})
	if err != nil || !slices.Equal(change.Restarted, []string{"alpha"}) {
		t.Fatalf("Apply: got %+v, %v; want alpha restarted", change, err)
	}
	if _, ok := h.Catalog().Tool("alpha_echo"); !ok {
		t.Error("alpha_echo left the catalog while alpha restarted")
	}
	if err := h.AwaitStarted(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, h, "alpha_getenv", map[string]any{"name": "EDITED"}); got != "yes" {
		t.Fatalf("alpha_getenv EDITED: got %q, want yes", got)
	}
	select {
	case <-changes:
		t.Error("a restart that changed no tool announced a catalog change")
	default:
	}
}

// An edit whose prefix makes one upstream's tools take names another's
// have is refused whole: the catalog and the upstreams stay.
func TestHubApplyRefusesANameCollision(t *testing.T) {
	h := startHub(t, builtinFake("alpha"), builtinFake("beta"))
	clash := builtinFake("beta")
	clash.Prefix = "alpha_"
	_, err := h.Apply(t.Context(), []UpstreamConfig{builtinFake("alpha"), clash, builtinFake("gamma")})
	var ce *CollisionError
	if !errors.As(err, &ce) || !slices.Equal(ce.Upstreams, []string{"alpha", "beta"}) {
		t.Fatalf("Apply of a colliding prefix: got %v, want a CollisionError naming alpha and beta", err)
	}
	if _, ok := h.Catalog().Tool("beta_echo"); !ok {
		t.Error("beta_echo left the catalog after a refused Apply")
	}
	if len(h.Status()) != 2 {
		t.Errorf("a refused Apply added an upstream: %+v", h.Status())
	}
}

// A call of a tool whose upstream restarts for an edit waits for it as a
// call at start does (StartWait), not only as for a crash (ReconnectWait).
func TestHubApplyCallWaitsForARestartedUpstream(t *testing.T) {
	slow := func(delay string) UpstreamConfig {
		exe, env := stdioFake("alpha").Command, stdioFake("alpha").Env
		env["DELAY"], env["FAKE"] = delay, exe
		return UpstreamConfig{Name: "alpha", Transport: TransportStdio, Command: "sh",
			Args: []string{"-c", `sleep "$DELAY"; exec "$FAKE"`}, Env: env, Prefix: "alpha_"}
	}
	h := startHubWith(t, Options{Upstreams: []UpstreamConfig{slow("0")}, ReconnectWait: time.Millisecond})
	if _, err := h.Apply(t.Context(), []UpstreamConfig{slow("0.5")}); err != nil {
		t.Fatal(err)
	}
	if got := callText(t, h, "alpha_getenv", map[string]any{"name": "DELAY"}); got != "0.5" {
		t.Errorf("alpha_getenv DELAY: got %q, want 0.5 (the restarted run)", got)
	}
}
