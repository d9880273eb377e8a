package console

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-router/mcp-router/internal/clip"
	"github.com/mcp-router/mcp-router/proxy/approval"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

// Bounds on what a page reads from a request.
const (
	maxQueryBytes  = 2000 // a catalog search or playground request
	maxDomains     = 8
	maxToolsListed = 500
	maxRanked      = 20
)

type upstreamsData struct {
	Upstreams []Upstream
	ReadOnly  bool
}

func (c *Console) upstreamsPage(w http.ResponseWriter, r *http.Request, v *view) {
	var d upstreamsData
	var err error
	if c.opts.Gateway != nil {
		d.Upstreams, err = c.opts.Gateway.Upstreams(r.Context())
		d.ReadOnly = len(d.Upstreams) > 0 && !slices.ContainsFunc(d.Upstreams, func(u Upstream) bool { return u.Restartable })
	}
	c.show(w, r, v, "upstreams", d, err)
}

// show renders page with data, or fails with err (500).
func (c *Console) show(w http.ResponseWriter, r *http.Request, v *view, page string, data any, err error) {
	if err != nil {
		c.fail(w, r, v, http.StatusInternalServerError, err)
		return
	}
	v.Data = data
	c.render(w, r, http.StatusOK, page, v)
}

func (c *Console) restart(w http.ResponseWriter, r *http.Request, v *view) {
	name := r.PostFormValue("upstream")
	if c.opts.Gateway == nil {
		c.fail(w, r, v, http.StatusConflict, ErrReadOnly)
		return
	}
	err := c.opts.Gateway.Restart(r.Context(), name)
	switch {
	case errors.Is(err, ErrReadOnly):
		c.fail(w, r, v, http.StatusConflict, err)
		return
	case err != nil:
		c.fail(w, r, v, http.StatusBadRequest, err)
		return
	}
	c.log.Info("upstream restarted from the console", "upstream", name)
	http.Redirect(w, r, prefix+"/upstreams", http.StatusSeeOther)
}

type catalogData struct {
	Query, Upstream string
	Upstreams       []string
	Tools           []Tool
	Total           int
	Warnings        []string
}

func (c *Console) catalogPage(w http.ResponseWriter, r *http.Request, v *view) {
	d := catalogData{Query: bounded(r.FormValue("q")), Upstream: bounded(r.FormValue("upstream"))}
	var err error
	if c.opts.Catalog != nil {
		var tools []Tool
		tools, d.Warnings, err = c.opts.Catalog.Tools(r.Context())
		d.Total = len(tools)
		q := strings.ToLower(strings.TrimSpace(d.Query))
		for _, t := range tools {
			if !slices.Contains(d.Upstreams, t.Upstream) {
				d.Upstreams = append(d.Upstreams, t.Upstream)
			}
			if d.Upstream != "" && t.Upstream != d.Upstream {
				continue
			}
			if q != "" && !strings.Contains(strings.ToLower(t.Name+" "+t.Description), q) {
				continue
			}
			if len(d.Tools) < maxToolsListed {
				d.Tools = append(d.Tools, t)
			}
		}
		slices.Sort(d.Upstreams)
	}
	c.show(w, r, v, "catalog", d, err)
}

type pinsData struct {
	Off     bool
	Blocked []pinView
	All     []integrity.Pin
}

type pinView struct {
	integrity.Pin
	Diff []diffLine
	// Findings are what the poisoning scan finds in the definition an approval approves, shown
	// before its button.
	Findings []integrity.Finding
}

func (c *Console) pinsPage(w http.ResponseWriter, r *http.Request, v *view) {
	d := pinsData{Off: c.opts.Pins == nil}
	var err error
	if c.opts.Pins != nil {
		var store *integrity.Store
		if store, err = integrity.OpenStore(c.opts.Pins); err == nil {
			d.All = store.List()
		}
		for _, p := range d.All {
			if p.Pending() || p.Held != "" {
				d.Blocked = append(d.Blocked, pinView{Pin: p, Diff: pinDiff(p), Findings: shownFindings(p)})
			}
		}
	}
	c.show(w, r, v, "pins", d, err)
}

// pinDiff is the change waiting for approval, line by line: the full contracts when the pin keeps
// them, else the description excerpts.
func pinDiff(p integrity.Pin) []diffLine {
	if !p.Pending() {
		return nil
	}
	if p.Contract != "" && p.PendingContract != "" {
		return diff(p.Contract, p.PendingContract)
	}
	return diff(p.DescriptionExcerpt, p.PendingExcerpt)
}

// shownFindings are the poisoning scan's findings in the definition an approval of p approves.
func shownFindings(p integrity.Pin) []integrity.Finding {
	return integrity.ScanContract(cmp.Or(p.ShownContract(), p.PendingExcerpt, p.DescriptionExcerpt), nil)
}

// approve approves the definition the pins page showed: its hash comes with the form, and a
// definition changed since is refused (409) for the page to show again.
func (c *Console) approve(w http.ResponseWriter, r *http.Request, v *view) {
	up, tool, hash := r.PostFormValue("upstream"), r.PostFormValue("tool"), r.PostFormValue("hash")
	if c.opts.Pins == nil {
		c.fail(w, r, v, http.StatusConflict, errors.New("tool pinning is off in this profile"))
		return
	}
	if len(hash) < integrity.MinShownHash {
		c.fail(w, r, v, http.StatusBadRequest, errors.New("the approval names no definition (its hash): approve from the pins page"))
		return
	}
	store, err := integrity.OpenStore(c.opts.Pins)
	if err == nil {
		err = store.ApproveShown(up+"/"+tool, hash, func(string) (string, string, bool) { return up, tool, true })
	}
	switch {
	case errors.Is(err, integrity.ErrUnknownTool):
		c.fail(w, r, v, http.StatusNotFound, err)
		return
	case errors.Is(err, integrity.ErrNotShown):
		c.fail(w, r, v, http.StatusConflict, fmt.Errorf("%w: open the pins page again to see the new definition", err))
		return
	case err != nil:
		c.fail(w, r, v, http.StatusInternalServerError, err)
		return
	}
	c.log.Info("tool approved from the console", "upstream", up, "tool", tool)
	http.Redirect(w, r, prefix+"/pins", http.StatusSeeOther)
}

type lessonsData struct {
	Off     bool
	Lessons []lessons.Lesson
}

func (c *Console) lessonsPage(w http.ResponseWriter, r *http.Request, v *view) {
	d := lessonsData{Off: c.opts.Lessons == nil}
	var err error
	if c.opts.Lessons != nil {
		d.Lessons, err = c.opts.Lessons.All(r.Context())
		// Another principal's lessons are its own: an administrative caller sees them all, any
		// other the shared ones and its own.
		d.Lessons = slices.DeleteFunc(d.Lessons, func(l lessons.Lesson) bool {
			return !v.Caller.Admin && l.Principal != "" && l.Principal != v.Caller.Principal
		})
	}
	c.show(w, r, v, "lessons", d, err)
}

func (c *Console) forget(w http.ResponseWriter, r *http.Request, v *view) {
	id, err := strconv.ParseInt(r.PostFormValue("id"), 10, 64)
	if err != nil {
		c.fail(w, r, v, http.StatusBadRequest, fmt.Errorf("%q is not a lesson id", bounded(r.PostFormValue("id"))))
		return
	}
	if c.opts.Lessons == nil {
		c.fail(w, r, v, http.StatusConflict, errors.New("routing lessons are off in this profile"))
		return
	}
	err = c.opts.Lessons.Delete(r.Context(), id)
	switch {
	case errors.Is(err, lessons.ErrNotFound):
		c.fail(w, r, v, http.StatusNotFound, err)
		return
	case err != nil:
		c.fail(w, r, v, http.StatusInternalServerError, err)
		return
	}
	c.log.Info("lesson forgotten from the console", "id", id)
	if r.Header.Get("HX-Request") != "" {
		w.WriteHeader(http.StatusOK) // htmx swaps the row out for nothing
		return
	}
	http.Redirect(w, r, prefix+"/lessons", http.StatusSeeOther)
}

func (c *Console) activityPage(w http.ResponseWriter, r *http.Request, v *view) {
	var a Activity
	var err error
	if c.opts.Gateway != nil {
		a, err = c.opts.Gateway.Activity(r.Context())
	}
	c.show(w, r, v, "activity", a, err)
}

type playgroundData struct {
	Query, Domains string
	Ran            bool
	Off            bool
	Decision       routing.Decision
	Ranked         []rankedView
}

type rankedView struct {
	routing.Candidate
	Rank     int
	Selected bool
	Signals  []string
}

func (c *Console) playgroundPage(w http.ResponseWriter, r *http.Request, v *view) {
	d := playgroundData{Query: bounded(r.FormValue("q")), Domains: bounded(r.FormValue("domains")), Off: c.opts.Catalog == nil}
	if strings.TrimSpace(d.Query) != "" && c.opts.Catalog != nil {
		req := routing.Request{Query: d.Query, Domains: domains(d.Domains), Principal: v.Caller.Principal}
		dec, err := c.opts.Catalog.Route(r.Context(), req)
		if err != nil {
			c.fail(w, r, v, http.StatusInternalServerError, err)
			return
		}
		d.Ran, d.Decision, d.Ranked = true, dec, ranked(dec)
	}
	c.show(w, r, v, "playground", d, nil)
}

// ranked is the decision's ranking with what fired for each candidate.
func ranked(d routing.Decision) []rankedView {
	var out []rankedView
	for i, cand := range d.Ranked[:min(len(d.Ranked), maxRanked)] {
		rv := rankedView{Candidate: cand, Rank: i + 1}
		rv.Selected = slices.ContainsFunc(d.Selected, func(s routing.Candidate) bool { return s.Name == cand.Name })
		if cand.Matched > 0 {
			rv.Signals = append(rv.Signals, fmt.Sprintf("matches %d of %d words", cand.Matched, cand.Words))
		}
		if cand.Multiplier != 0 && cand.Multiplier != 1 {
			rv.Signals = append(rv.Signals, fmt.Sprintf("domain affinity ×%.2f", cand.Multiplier))
		}
		if cand.Lesson != 0 {
			rv.Signals = append(rv.Signals, fmt.Sprintf("lessons %+.3f", cand.Lesson))
		}
		if len(cand.Alternatives) > 0 {
			rv.Signals = append(rv.Signals, "same tool on "+strings.Join(cand.Alternatives, ", "))
		}
		if slices.Contains(d.Boundary, cand.Name) {
			rv.Signals = append(rv.Signals, "boundary loading")
		}
		out = append(out, rv)
	}
	return out
}

// domains splits a comma- or space-separated list of domains.
func domains(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	return f[:min(len(f), maxDomains)]
}

// bounded cuts s to maxQueryBytes on a rune boundary.
func bounded(s string) string { return clip.Prefix(s, maxQueryBytes) }

// Approvals are the calls that wait for an administrative principal's answer
// (approvals.without_elicitation: console): approval.Queue.
type Approvals interface {
	// Pending are the calls waiting, oldest first.
	Pending() []approval.Request
	// Answer approves or declines one as principal by; approval.ErrNotPending when it no longer
	// waits.
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
		// Another principal's calls are its own, as its lessons are: an administrative caller sees
		// them all, any other only its own.
		d.Pending = slices.DeleteFunc(c.opts.Approvals.Pending(), func(r approval.Request) bool {
			return !v.Caller.Admin && r.Principal != v.Caller.Principal
		})
	}
	c.show(w, r, v, "approvals", d, nil)
}

// answer approves or declines a waiting call: an administrative action, like a pin's approval.
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

// diffLine is one line of a diff: Op is ' ' (in both), '-' (only in the approved text) or '+' (only
// in the new one).
type diffLine struct {
	Op   string
	Text string
}

// maxDiffLines bounds each side of the changed middle of a diff: the longest common subsequence
// takes time and memory in the product of the sides' lengths. diffContext is how many unchanged
// lines are shown on each side of it.
const (
	maxDiffLines = 500
	diffContext  = 3
)

// diff is the line diff of a and b: the lines they share at the start and the end are cut to
// diffContext lines and a count, and the middle is compared by its longest common subsequence.
func diff(a, b string) []diffLine {
	x, y := lines(a), lines(b)
	p, s := shared(x, y)
	var out []diffLine
	if p > diffContext {
		out = append(out, diffLine{" ", fmt.Sprintf("… %d unchanged lines", p-diffContext)})
	}
	for _, l := range x[max(0, p-diffContext):p] {
		out = append(out, diffLine{" ", l})
	}
	out = append(out, middleDiff(x[p:len(x)-s], y[p:len(y)-s])...)
	for _, l := range x[len(x)-s : len(x)-s+min(s, diffContext)] {
		out = append(out, diffLine{" ", l})
	}
	if s > diffContext {
		out = append(out, diffLine{" ", fmt.Sprintf("… %d unchanged lines", s-diffContext)})
	}
	return out
}

// shared is how many lines x and y share at the start, and then at the end.
func shared(x, y []string) (p, s int) {
	for p < len(x) && p < len(y) && x[p] == y[p] {
		p++
	}
	for s < len(x)-p && s < len(y)-p && x[len(x)-1-s] == y[len(y)-1-s] {
		s++
	}
	return p, s
}

// middleDiff is the diff of x and y by their longest common subsequence, each cut to maxDiffLines
// with a count of the lines left out.
func middleDiff(x, y []string) []diffLine {
	var cut []diffLine
	if len(x) > maxDiffLines || len(y) > maxDiffLines {
		cut = []diffLine{{" ", fmt.Sprintf("… %d and %d more lines, not compared", max(0, len(x)-maxDiffLines), max(0, len(y)-maxDiffLines))}}
		x, y = x[:min(len(x), maxDiffLines)], y[:min(len(y), maxDiffLines)]
	}
	return append(walkLCS(x, y, lcs(x, y)), cut...)
}

// lcs is the table of the longest common subsequence's lengths: lcs[i][j] is that of x[i:] and
// y[j:].
func lcs(x, y []string) [][]int32 {
	t := make([][]int32, len(x)+1)
	for i := range t {
		t[i] = make([]int32, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t
}

// walkLCS writes the diff of x and y along t, their lcs table.
func walkLCS(x, y []string, t [][]int32) []diffLine {
	n, m := len(x), len(y)
	var out []diffLine
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case x[i] == y[j]:
			out = append(out, diffLine{" ", x[i]})
			i, j = i+1, j+1
		case t[i+1][j] >= t[i][j+1]:
			out = append(out, diffLine{"-", x[i]})
			i++
		default:
			out = append(out, diffLine{"+", y[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffLine{"-", x[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffLine{"+", y[j]})
	}
	return out
}

// lines splits s into lines.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
