package approval

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/call"
)

func TestPolicyGated(t *testing.T) {
	p := Policy{Destructive: true, Tools: []string{"fs_write_*", "git_push"}}
	for _, tc := range []struct {
		name        string
		destructive bool
		want        bool
	}{
		{"fs_write_file", false, true},
		{"git_push", false, true},
		{"git_push_all", false, false},
		{"db_drop", true, true},
		{"fs_read_file", false, false},
		{"fs_Write_File", false, true},
		{"GIT_PUSH", false, true},
	} {
		if got := p.Gated(tc.name, tc.destructive); got != tc.want {
			t.Errorf("Gated(%s, destructive %v) = %v, want %v", tc.name, tc.destructive, got, tc.want)
		}
	}
	if (Policy{Tools: []string{"x"}}).Gated("y", true) {
		t.Error("a destructive tool is gated without approvals.destructive")
	}
	if !(Policy{Tools: []string{"FS_[W]rite_*"}}).Gated("fs_write_file", false) {
		t.Error("an upper-case glob does not gate its lower-case tool")
	}
	if (Policy{}).On() {
		t.Error("the zero policy gates something")
	}
}

func TestParseModeAndGlob(t *testing.T) {
	if m, err := ParseMode(""); m != Refuse || err != nil {
		t.Errorf(`ParseMode("") = %v, %v; want refuse`, m, err)
	}
	if _, err := ParseMode("Console"); err == nil || !strings.Contains(err.Error(), "refuse, console, allow") {
		t.Errorf("ParseMode(Console) = %v, want an error listing the modes", err)
	}
	if err := CheckGlob("fs_[write"); err == nil {
		t.Error("CheckGlob accepted an unclosed class")
	}
}

// The summary hides secrets by key and by shape, keeps references as
// written, and is cut at a UTF-8 boundary.
func TestSummary(t *testing.T) {
	got := Summary(map[string]any{"path": "$<<w.out>>", "password": "hunter2-long", "note": "key ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"})
	for _, bad := range []string{"hunter2", "ghp_0123"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary %q shows %q", got, bad)
		}
	}
	if !strings.Contains(got, `"$<<w.out>>"`) {
		t.Errorf("summary %q does not show the reference as written", got)
	}
	many := map[string]any{}
	for _, k := range strings.Split("abcdefghij", "") {
		many[k] = strings.Repeat("é", 2000)
	}
	long := Summary(many)
	if len(long) > MaxSummaryBytes+len("…") || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Errorf("a long summary is %d bytes (valid UTF-8 %v), want at most %d and marked cut", len(long), utf8.ValidString(long), MaxSummaryBytes)
	}
}

// A full queue refuses the newcomer at once and keeps every call that
// waits; an answer reaches its call; an answered call is not pending.
// A question is cut, marked, to MaxMessageBytes in all, whatever it asks.
func TestQuestionWithinItsBound(t *testing.T) {
	msg := Question(strings.Repeat("é", MaxMessageBytes)).Params.Message
	if len(msg) > MaxMessageBytes || !strings.HasSuffix(msg, "…") || !utf8.ValidString(msg) {
		t.Errorf("got %d bytes ending %q (valid UTF-8: %v), want at most %d ending with …", len(msg), msg[len(msg)-8:], utf8.ValidString(msg), MaxMessageBytes)
	}
}

func TestQueueBoundRefusesTheNewest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(2)
		if _, err := q.Wait(t.Context(), Request{Tool: "a"}); !errors.Is(err, ErrNoConsole) {
			t.Fatalf("before a console serves it: got %v, want ErrNoConsole", err)
		}
		q.Serve()
		results := make(chan Decision, 2)
		for _, tool := range []string{"a", "b"} {
			go func() {
				d, _ := q.Wait(t.Context(), Request{Tool: tool, Principal: "p-" + tool})
				results <- d
			}()
		}
		synctest.Wait()
		if _, err := q.Wait(t.Context(), Request{Tool: "c", Principal: "p-c"}); !errors.Is(err, ErrQueueFull) {
			t.Fatalf("a third call: got %v, want ErrQueueFull", err)
		}
		pending := q.Pending()
		if len(pending) != 2 {
			t.Fatalf("pending %d, want the 2 first", len(pending))
		}
		for _, p := range pending {
			if err := q.Answer(p.ID, p.Tool == "a", "admin"); err != nil {
				t.Fatal(err)
			}
		}
		got := map[Decision]int{<-results: 1}
		got[<-results]++
		if got[Decision{true, "admin"}] != 1 || got[Decision{false, "admin"}] != 1 {
			t.Errorf("answers reached as %v, want one approval and one decline, both by admin", got)
		}
		if err := q.Answer(pending[0].ID, true, "admin"); !errors.Is(err, ErrNotPending) {
			t.Errorf("answering twice: got %v, want ErrNotPending", err)
		}
	})
}

// eliciting is a call from a client of the sessions era that declared
// elicitation, with arguments the model wrote.
func eliciting(args any) *call.Call {
	return &call.Call{Tool: "fs_wipe", Upstream: "fs", Args: args, Caps: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}}
}

func gate(p Policy, ask func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)) *Gate {
	return New(Options{Policy: p, Ask: ask, Tool: func(string) (string, bool, bool) { return "fs", true, true }})
}

func upstreamCalled(called *bool) call.Handler {
	return func(context.Context, *call.Call) (*mcp.CallToolResult, error) {
		*called = true
		return mcp.NewToolResultText("done"), nil
	}
}

// No answer within the bound is approval_timeout, and the call is not
// made.
func TestStageTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := gate(Policy{Destructive: true, Timeout: time.Minute}, func(ctx context.Context, _ mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		var called bool
		_, err := g.Stage(t.Context(), eliciting(map[string]any{}), upstreamCalled(&called))
		if ce, ok := errors.AsType[*call.Error](err); !ok || ce.Kind != Timeout || called || !strings.HasPrefix(err.Error(), "approval_timeout") {
			t.Errorf("got %v (upstream called %v), want approval_timeout and no call", err, called)
		}
	})
}

// What the model sends does not approve: an approve argument on a client
// that cannot be asked is refused; with allow the call goes on, audited
// as unasked.
func TestModelCannotApprove(t *testing.T) {
	c := eliciting(map[string]any{"approve": true})
	c.Caps = nil
	c.Meta = &mcp.Meta{AdditionalFields: map[string]any{"approve": true}}
	var called bool
	_, err := gate(Policy{Destructive: true}, nil).Stage(t.Context(), c, upstreamCalled(&called))
	if ce, ok := errors.AsType[*call.Error](err); !ok || ce.Kind != Unavailable || called || !strings.Contains(err.Error(), "approvals.without_elicitation") {
		t.Errorf("got %v (upstream called %v), want approval_unavailable naming the key", err, called)
	}
	_, err = gate(Policy{Destructive: true, WithoutElicitation: Allow}, nil).Stage(t.Context(), c, upstreamCalled(&called))
	if err != nil || !called || c.Approval != AllowedUnasked {
		t.Errorf("allow: got %v, called %v, approval %q; want the call made, audited %s", err, called, c.Approval, AllowedUnasked)
	}
}

// A stateless-era answer counts only with a state the gate sealed for
// that very call, once, before it lapses.
func TestRoundsBelieveOnlyTheirOwnState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRounds()
		c := &call.Call{Tool: "fs_wipe", Principal: "p1", Era: call.Stateless}
		args := map[string]any{"path": "/a"}
		ask := r.ask(c, args, "call fs_wipe", time.Minute)
		state := ask.Result.RequestState
		accept := mcp.InputResponses{inputID: mcp.InputResponse{Elicitation: &mcp.ElicitationResult{
			ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve": true}}}}}
		with := func(c *call.Call, state string) *call.Call {
			d := *c
			d.Input = &mcp.MultiRoundTripParams{InputResponses: accept, RequestState: state}
			return &d
		}
		other := *c
		other.Principal = "p2"
		for name, tc := range map[string]struct {
			c    *call.Call
			args any
		}{
			"no state":          {with(c, ""), args},
			"a forged state":    {with(c, "AAAAAAAAAAA"+state[11:]), args},
			"other arguments":   {with(c, state), map[string]any{"path": "/b"}},
			"another principal": {with(&other, state), args},
		} {
			if _, asked, _ := r.answer(tc.c, tc.args); asked {
				t.Errorf("%s: the answer was believed", name)
			}
		}
		if res, asked, _ := r.answer(with(c, state), args); !asked || res == nil || !approves(res.Content) {
			t.Fatalf("the answer to the gate's own question was not read: %v %v", res, asked)
		}
		if _, asked, _ := r.answer(with(c, state), args); asked {
			t.Error("a state was believed twice")
		}
		late := r.ask(c, args, "call fs_wipe", time.Minute).Result.RequestState
		<-time.After(2 * time.Minute) // fake time: the question lapses
		if _, asked, lapsed := r.answer(with(c, late), args); !asked || !lapsed {
			t.Errorf("an answer after the lapse: asked %v lapsed %v, want a lapsed answer", asked, lapsed)
		}
	})
}

// The answers kept as spent until they lapse are bounded per principal:
// one client that answers its own questions as fast as it can does not
// fill the bound and leave another principal's answers unread (asked
// again and again) until its own lapse.
func TestRoundsSpentStatesBoundedPerPrincipal(t *testing.T) {
	r := newRounds()
	accept := mcp.InputResponses{inputID: mcp.InputResponse{Elicitation: &mcp.ElicitationResult{
		ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve": true}}}}}
	answer := func(c *call.Call, args any) bool {
		d := *c
		d.Input = &mcp.MultiRoundTripParams{InputResponses: accept, RequestState: r.ask(c, args, "call fs_wipe", time.Minute).Result.RequestState}
		_, asked, _ := r.answer(&d, args)
		return asked
	}
	for _, heavies := range []int{1, 4} { // four at a quarter each filled the bound
		r = newRounds()
		for p := range heavies {
			heavy := &call.Call{Tool: "fs_wipe", Principal: fmt.Sprint("heavy", p), Era: call.Stateless}
			for i := range maxSeals {
				answer(heavy, map[string]any{"n": i})
			}
		}
		light := &call.Call{Tool: "fs_wipe", Principal: "light", Era: call.Stateless}
		if !answer(light, map[string]any{"path": "/a"}) {
			t.Errorf("after %d answers of each of %d other principals, this principal's answer was not read", maxSeals, heavies)
		}
	}
}

// Room made for another principal's answer never lets a state be used
// twice: the principal whose spent state was forgotten to make it has its
// states lapsing as late refused (asked again).
func TestRoundsSpentStateForgottenIsNotReusable(t *testing.T) {
	r := newRounds()
	accept := mcp.InputResponses{inputID: mcp.InputResponse{Elicitation: &mcp.ElicitationResult{
		ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve": true}}}}}
	retry := func(c *call.Call, n int, state string) bool {
		d := *c
		d.Input = &mcp.MultiRoundTripParams{InputResponses: accept, RequestState: state}
		_, asked, _ := r.answer(&d, map[string]any{"n": n})
		return asked
	}
	var states []string
	for p := range 4 {
		heavy := &call.Call{Tool: "fs_wipe", Principal: fmt.Sprint("heavy", p), Era: call.Stateless}
		for i := range maxSeals / 4 {
			state := r.ask(heavy, map[string]any{"n": i}, "call fs_wipe", time.Minute).Result.RequestState
			if !retry(heavy, i, state) {
				t.Fatal("an answer within the bounds was not read")
			}
			states = append(states, state)
		}
	}
	light := &call.Call{Tool: "fs_wipe", Principal: "light", Era: call.Stateless}
	if !retry(light, 0, r.ask(light, map[string]any{"n": 0}, "call fs_wipe", time.Minute).Result.RequestState) {
		t.Fatal("the light principal's answer was not read")
	}
	for i, state := range states {
		if retry(&call.Call{Tool: "fs_wipe", Principal: fmt.Sprint("heavy", i/(maxSeals/4)), Era: call.Stateless}, i%(maxSeals/4), state) {
			t.Fatalf("spent state %d read again", i)
		}
	}
}

// The gate fails closed: a call that reaches it under a name approvals.tools
// gates is asked about even when the catalog does not have the name (it
// was relisted meanwhile, or came by a path that skipped the catalog).
func TestStageGatesANameTheCatalogLacks(t *testing.T) {
	g := New(Options{Policy: Policy{Tools: []string{"fs_*"}},
		Tool: func(string) (string, bool, bool) { return "", false, false },
		Ask: func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
		}})
	var called bool
	_, err := g.Stage(t.Context(), eliciting(map[string]any{}), upstreamCalled(&called))
	if ce, ok := errors.AsType[*call.Error](err); !ok || ce.Kind != Declined || called {
		t.Errorf("got %v (upstream called %v), want declined_by_user and no call", err, called)
	}
}

// A stateless-era plan step that needs approval its plan did not give
// (its tool became gated after the plan was asked about) is refused: an
// input round answered to a step would read as the step's success.
func TestStageRefusesAStatelessStepUnasked(t *testing.T) {
	c := eliciting(map[string]any{})
	c.Era, c.Plan, c.Step = call.Stateless, "p1", "wipe"
	var called bool
	res, err := gate(Policy{Destructive: true}, nil).Stage(t.Context(), c, upstreamCalled(&called))
	if ce, ok := errors.AsType[*call.Error](err); !ok || ce.Kind != Unavailable || called || res != nil {
		t.Errorf("got %v, %v (upstream called %v), want approval_unavailable, no result and no call", res, err, called)
	}
}

// Only an accepted form whose approve is the boolean true approves: a
// string "true", a number, a decline or cancel that carries approve, an
// answer with no content do not; extra fields beside approve: true do not
// change it.
func TestElicitationAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		action  mcp.ElicitationResponseAction
		content any
		want    bool
	}{
		"approve true":             {mcp.ElicitationResponseActionAccept, map[string]any{Field: true}, true},
		"approve true, extra keys": {mcp.ElicitationResponseActionAccept, map[string]any{Field: true, "note": "ok"}, true},
		`approve "true"`:           {mcp.ElicitationResponseActionAccept, map[string]any{Field: "true"}, false},
		"approve 1":                {mcp.ElicitationResponseActionAccept, map[string]any{Field: 1}, false},
		"Approve true":             {mcp.ElicitationResponseActionAccept, map[string]any{"Approve": true}, false},
		"no content":               {mcp.ElicitationResponseActionAccept, nil, false},
		"a list":                   {mcp.ElicitationResponseActionAccept, []any{true}, false},
		"declined with approve":    {mcp.ElicitationResponseActionDecline, map[string]any{Field: true}, false},
		"cancelled with approve":   {mcp.ElicitationResponseActionCancel, map[string]any{Field: true}, false},
	} {
		g := gate(Policy{Destructive: true}, func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: tc.action, Content: tc.content}}, nil
		})
		var called bool
		_, err := g.Stage(t.Context(), eliciting(map[string]any{}), upstreamCalled(&called))
		if called != tc.want || (err == nil) != tc.want {
			t.Errorf("%s: upstream called %v, err %v; want called %v", name, called, err, tc.want)
		}
	}
}

// A plan question's carry rides in its state: the retry reads it back
// only from a state sealed for that call, and its answer approves that
// carry alone, not one the client changed.
func TestRoundsCarryTheirSubject(t *testing.T) {
	r := newRounds()
	c := &call.Call{Tool: "plan", Principal: "p1", Era: call.Stateless}
	carry := Carry(`{"plan":{"steps":[{"id":"w","tool":"fs_wipe"}]}}`)
	state := r.ask(c, carry, "run a plan", time.Minute).Result.RequestState
	with := func(c *call.Call, state string) *call.Call {
		d := *c
		d.Input = &mcp.MultiRoundTripParams{RequestState: state}
		return &d
	}
	if got, ok := r.carried(with(c, state)); !ok || string(got) != string(carry) {
		t.Fatalf("carried = %q, %v; want the carry back", got, ok)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(state)
	forged := base64.RawURLEncoding.EncodeToString(append(raw[:len(raw)-len(carry)], `{"plan":{"steps":[]}}`...))
	other := *c
	other.Principal = "p2"
	for name, cc := range map[string]*call.Call{"a forged carry": with(c, forged), "another principal": with(&other, state), "no state": c} {
		if got, ok := r.carried(cc); ok {
			t.Errorf("%s: carried %q", name, got)
		}
	}
	if _, asked, _ := r.answer(with(c, state), Carry(`{"plan":{"steps":[]}}`)); asked {
		t.Error("the answer approved a carry other than the one asked about")
	}
	plain := r.ask(c, map[string]any{"path": "/a"}, "call fs_wipe", time.Minute).Result.RequestState
	if got, ok := r.carried(with(c, plain)); ok {
		t.Errorf("a question without a carry carried %q", got)
	}
}
