package console

import (
	"errors"
	"net/http"
	"slices"

	"github.com/mcp-router/mcp-router/proxy/approval"
)

// Approvals are the calls that wait for an administrative principal's
// answer (approvals.without_elicitation: console): approval.Queue.
type Approvals interface {
	// Pending are the calls waiting, oldest first.
	Pending() []approval.Request
	// Answer approves or declines one as principal by;
	// approval.ErrNotPending when it no longer waits.
	Answer(id string, approve bool, by string) error
}

var _ Approvals = (*approval.Queue)(nil)

type approvalsData struct {
	Off     bool
	Pending []approval.Request
}

func (c *Console) approvalsPage(w http.ResponseWriter, r *http.Request, v *view) {
	d := approvalsData{Off: c.opts.Approvals == nil}
	if c.opts.Approvals != nil {
		// Another principal's calls are its own, as its lessons are: an
		// administrative caller sees them all, any other only its own.
		d.Pending = slices.DeleteFunc(c.opts.Approvals.Pending(), func(r approval.Request) bool {
			return !v.Caller.Admin && r.Principal != v.Caller.Principal
		})
	}
	c.show(w, r, v, "approvals", d, nil)
}

// answer approves or declines a waiting call: an administrative action,
// like a pin's approval.
func (c *Console) answer(w http.ResponseWriter, r *http.Request, v *view) {
	if c.opts.Approvals == nil {
		c.fail(w, r, v, http.StatusConflict, errors.New("no call waits for the console here (approvals.without_elicitation is not console)"))
		return
	}
	id, decision := r.PostFormValue("id"), r.PostFormValue("decision")
	if decision != "approve" && decision != "decline" {
		c.fail(w, r, v, http.StatusBadRequest, errors.New(`decision must be "approve" or "decline"`))
		return
	}
	if err := c.opts.Approvals.Answer(id, decision == "approve", v.Caller.Principal); err != nil {
		c.fail(w, r, v, http.StatusNotFound, err)
		return
	}
	c.log.Info("call answered from the console", "decision", decision, "principal", v.Caller.Principal)
	http.Redirect(w, r, prefix+"/approvals", http.StatusSeeOther)
}
