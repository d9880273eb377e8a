package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-router/mcp-router/internal/fakeupstream"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// delayedFake is a stdio fake upstream, a real process that takes delay
// to start, as a cold npx install does.
func delayedFake(name string, delay time.Duration) UpstreamConfig {
	exe, env := fakeupstream.Command(name)
	return UpstreamConfig{Name: name, Transport: TransportStdio, Command: "sh",
		Args: []string{"-c", "sleep " + strings.TrimSuffix(delay.String(), "s") + `; exec "$0"`, exe}, Env: env, Prefix: name + "_"}
}

// During start-up, resources/read and prompts/get of a server not
// connected yet wait for it as tools/call does, rather than failing at
// once with "not found".
func TestReadAndPromptWaitForAStartingUpstream(t *testing.T) {
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), delayedFake("slow", 1500*time.Millisecond)},
		StartWait: time.Minute})
	c := overHTTP(t, h)
	type outcome struct {
		text string
		err  error
	}
	read, prompt := make(chan outcome, 1), make(chan outcome, 1)
	go func() {
		res, err := c.session.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "fake://slow/readme"})
		if err != nil {
			read <- outcome{err: err}
			return
		}
		read <- outcome{text: res.Contents[0].Text}
	}()
	go func() {
		res, err := c.session.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "slow_greet", Arguments: map[string]string{"name": "Ann"}})
		if err != nil {
			prompt <- outcome{err: err}
			return
		}
		prompt <- outcome{text: res.Messages[0].Content.(*sdk.TextContent).Text}
	}()
	for what, ch := range map[string]chan outcome{"resources/read": read, "prompts/get": prompt} {
		select {
		case o := <-ch:
			if o.err != nil || !strings.Contains(o.text, "slow") {
				t.Errorf("%s of the starting server: %q, %v; want its answer once it connected", what, o.text, o.err)
			}
		case <-time.After(faultWait):
			t.Fatalf("%s did not return after the server connected", what)
		}
	}
}

// Past StartWait, they fail naming the server still starting; and the
// gateway's template for that stays out of resources/templates/list.
func TestReadAndPromptOfAStartingUpstreamSayItIsStarting(t *testing.T) {
	h := launchHub(t, newGates(t), Options{Upstreams: []UpstreamConfig{builtinFake("alpha"), hungStdio("hung")}, StartWait: 50 * time.Millisecond})
	c := overHTTP(t, h)
	if _, err := c.session.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "fake://hung/readme"}); err == nil ||
		!strings.Contains(err.Error(), "server hung is still starting") {
		t.Errorf("resources/read during start-up: %v, want it to say server hung is still starting", err)
	}
	if _, err := c.session.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "hung_greet"}); err == nil ||
		!strings.Contains(err.Error(), "server hung is still starting") {
		t.Errorf("prompts/get during start-up: %v, want it to say server hung is still starting", err)
	}
	if _, err := c.session.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "fake://alpha/readme"}); err != nil {
		t.Errorf("resources/read of a connected server: %v", err)
	}
	res, err := c.session.ListResourceTemplates(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tpl := range res.ResourceTemplates {
		if strings.HasPrefix(tpl.URITemplate, startingScheme) {
			t.Errorf("resources/templates/list shows the gateway's plumbing: %+v", tpl)
		}
	}
}

// AwaitStarted waits out a stdio child busy starting past its connect
// limit (npx installing: stderr all along), as the upstream itself gives
// it up to upstream.ConnectStretch limits, rather than returning at one.
func TestAwaitStartedWaitsForABusyChild(t *testing.T) {
	exe, env := fakeupstream.Command("busy")
	script := `i=0; while [ $i -lt 10 ]; do echo "installing: step $i" >&2; sleep 0.3; i=$((i+1)); done; exec "$0"`
	busy := UpstreamConfig{Name: "busy", Transport: TransportStdio, Command: "sh", Args: []string{"-c", script, exe}, Env: env, Prefix: "busy_"}
	h := newTestHub(t, Options{Upstreams: []UpstreamConfig{busy}, InitTimeout: time.Second})
	if err := h.Launch(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := h.AwaitStarted(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(h, "busy"); st.State != StateConnected {
		t.Errorf("after AwaitStarted, busy is %s (starting %v, %s), want connected: it was busy for 3s of a 1s limit", st.State, st.Starting, st.Doing)
	}
}

// The default start wait outlasts most cold `npx -y` starts (13-35 s
// measured) yet leaves a call time to answer within an MCP client's own
// request timeout (60 s in the TypeScript SDK).
func TestDefaultStartWaitFitsAColdNpxStart(t *testing.T) {
	const coldStart, clientTimeout = 30 * time.Second, 60 * time.Second
	if DefaultStartWait < coldStart || DefaultStartWait > clientTimeout/2 {
		t.Errorf("DefaultStartWait %s, want at least %s (a cold npx start) and at most half of a client's %s request timeout",
			DefaultStartWait, coldStart, clientTimeout)
	}
}

// limits.start_wait and limits.connect_timeout left unset reach the hub as
// zero and take the package's defaults (30s and 60s); set, they are kept.
func TestHubStartWaitAndConnectTimeoutDefaults(t *testing.T) {
	for _, tc := range []struct{ in, want [2]time.Duration }{
		{want: [2]time.Duration{30 * time.Second, 60 * time.Second}},
		{in: [2]time.Duration{3 * time.Second, 90 * time.Second}, want: [2]time.Duration{3 * time.Second, 90 * time.Second}},
	} {
		o := Options{StartWait: tc.in[0], InitTimeout: tc.in[1]}
		o.defaults()
		if got := [2]time.Duration{o.StartWait, o.InitTimeout}; got != tc.want {
			t.Errorf("StartWait and InitTimeout %v: got %v, want %v", tc.in, got, tc.want)
		}
	}
}
