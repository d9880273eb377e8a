package console

import (
	"errors"
	"net/http"

	"github.com/mcp-router/mcp-router/proxy/approval"
)

// Approvals are the calls that wait for an administrative principal's
// answer (approvals.without_elicitation: console): approval.Queue.
type Approvals interface {
	// Pending are the calls waiting, oldest first.
	Pending() []approval.Request
	// Answer approves or declines one; approval.ErrNotPending when it no
	// longer waits.
	Answer(id string, approve bool) error
}

var _ Approvals = (*approval.Queue)(nil)

type approvalsData struct {
	Off     bool
	Pending []approval.Request
}

func (c *Console) approvalsPage(w http.ResponseWriter, r *http.Request, v *view) {
	d := approvalsData{Off: c.opts.Approvals == nil}
	if c.opts.Approvals != nil {
		d.Pending = c.opts.Approvals.Pending()
	}
	v.Data = d
	c.render(w, r, "approvals", v)
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
	if err := c.opts.Approvals.Answer(id, decision == "approve"); err != nil {
		c.fail(w, r, v, http.StatusNotFound, err)
		return
	}
	c.log.Info("call answered from the console", "decision", decision, "principal", v.Caller.Principal)
	http.Redirect(w, r, c.prefix+"/approvals", http.StatusSeeOther)
}
