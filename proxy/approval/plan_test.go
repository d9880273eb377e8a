package approval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/executor"
	"github.com/mcp-router/mcp-router/proxy/call"
)

// askPlan asks g's question about p for a client that can be asked, and
// returns the message the person read ("" when none was asked) and the
// refusal, if any.
func askPlan(t *testing.T, p *executor.Plan) (string, error) {
	t.Helper()
	var asked string
	g := gate(Policy{Destructive: true}, func(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		asked = req.Params.Message
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{Field: true}}}, nil
	})
	c := eliciting(nil)
	c.Tool, c.Upstream = "run_plan", "" // the plan's own call: no server
	_, err := g.Plan(t.Context(), c, p, nil)
	return asked, err
}

// A plan's question lists every gated step, whatever the model padded
// the earlier ones with: the last step, the one that matters, is not cut
// off the message the person approves.
func TestPlanQuestionShowsEveryGatedStep(t *testing.T) {
	p := &executor.Plan{}
	padding := map[string]any{}
	for i := range 12 {
		padding[fmt.Sprintf("note%02d", i)] = strings.Repeat("harmless ", 20)
	}
	for i := range 8 {
		p.Steps = append(p.Steps, executor.Step{ID: fmt.Sprintf("s%d", i), Tool: "fs_touch", Args: padding})
	}
	p.Steps = append(p.Steps, executor.Step{ID: "last", Tool: "fs_wipe", Args: map[string]any{"path": "/"}})
	msg, err := askPlan(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg) > MaxMessageBytes {
		t.Errorf("the question is %d bytes, over %d", len(msg), MaxMessageBytes)
	}
	if !strings.Contains(msg, `step last: fs_wipe on fs with {"path":"/"}`) {
		t.Errorf("the question does not show the last step whole:\n%s", msg)
	}
	if len(p.Approved) != 9 {
		t.Errorf("approved %v, want the 9 steps", p.Approved)
	}
}

// What the person approves is said honestly: a foreach step says what it
// runs over (not one call but one per element), and the question says
// that a $<<...>> value is filled in from earlier results as the plan
// runs.
func TestPlanQuestionSaysWhatIsNotKnownYet(t *testing.T) {
	p := &executor.Plan{Steps: []executor.Step{
		{ID: "ls", Tool: "fs_list"},
		{ID: "rm", Tool: "fs_wipe", Foreach: "$<<ls.files>>", Args: map[string]any{"path": "$<<item>>"}},
	}}
	msg, err := askPlan(t, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`once for each element of "$<<ls.files>>"`, "filled in from earlier steps' results", `"$<<item>>"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the question does not say %q:\n%s", want, msg)
		}
	}
}

// A plan with more gated steps than one question can show is refused,
// asking nothing and approving nothing: the person never approves steps
// they were not shown.
func TestPlanTooLargeToShowIsRefused(t *testing.T) {
	p := &executor.Plan{}
	for i := range 64 {
		p.Steps = append(p.Steps, executor.Step{ID: fmt.Sprintf("step_with_a_long_name_%02d", i), Tool: "fs_wipe", Args: map[string]any{"path": strings.Repeat("x", 100)}})
	}
	msg, err := askPlan(t, p)
	if ce, ok := errors.AsType[*call.Error](err); !ok || ce.Kind != Unavailable || !strings.Contains(err.Error(), "split it") {
		t.Errorf("got %v, want approval_unavailable asking to split the plan", err)
	}
	if err != nil && strings.Contains(err.Error(), "on :") {
		t.Errorf("the refusal %q names an empty server", err)
	}
	if msg != "" || len(p.Approved) != 0 {
		t.Errorf("asked %q and approved %v, want nothing", msg, p.Approved)
	}
}
