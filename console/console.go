package console

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-router/mcp-router/internal/printable"
	"github.com/mcp-router/mcp-router/proxy/frontdoor"
	"github.com/mcp-router/mcp-router/proxy/integrity"
	"github.com/mcp-router/mcp-router/routing/lessons"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configures a Console.
type Options struct {
	// Door checks Host, Origin and login tokens; required.
	Door Door
	// Gateway is the upstreams and their calls; nil shows none.
	Gateway Gateway
	// Catalog is the tools and the router; nil shows none.
	Catalog Catalog
	// Pins are the tool pins; nil when pinning is off.
	Pins integrity.PinStore
	// Lessons are the routing lessons; nil when they are off.
	Lessons lessons.Store
	// Approvals are the calls waiting for the console's answer; nil when none can
	// (approvals.without_elicitation is not console).
	Approvals Approvals
	// Notes, when set, returns what every page shows above its content: degraded states a person
	// must know of (state kept in memory, an edit of the profile file that was refused); nil shows
	// none.
	Notes func(context.Context) []string
	// Logger gets a Warn line per refused request; nil is silent.
	Logger *slog.Logger
}

// The console is served at prefix and the paths under it; a login lasts sessionTTL.
const (
	prefix     = "/ui"
	sessionTTL = 12 * time.Hour
)

// Console serves the pages. It is an http.Handler for /ui and the paths under it.
type Console struct {
	opts     Options
	log      *slog.Logger
	pages    map[string]*template.Template
	static   http.Handler
	sessions *sessions
	logins   *loginLimit
	mux      *http.ServeMux
}

// New returns the console of opts; it does no I/O.
func New(opts Options) (*Console, error) {
	if opts.Door == nil {
		return nil, errors.New("console: no Door")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	sub, _ := fs.Sub(staticFS, "static")
	c := &Console{
		opts: opts, log: opts.Logger, pages: pages,
		static:   http.StripPrefix(prefix+"/static/", http.FileServerFS(sub)),
		sessions: &sessions{byID: map[string]session{}},
		logins:   &loginLimit{now: time.Now},
	}
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	p := prefix
	m := http.NewServeMux()
	m.Handle("GET "+p+"/static/", c.static)
	m.HandleFunc("GET "+p+"/login", c.loginForm)
	m.HandleFunc("POST "+p+"/login", c.login)
	m.HandleFunc("POST "+p+"/logout", c.authed(c.logout))
	m.HandleFunc("GET "+p+"/{$}", c.authed(c.home))
	m.HandleFunc("GET "+p+"/upstreams", c.authed(c.upstreamsPage))
	m.HandleFunc("POST "+p+"/upstreams/restart", c.authed(c.adminOnly(c.restart)))
	m.HandleFunc("GET "+p+"/catalog", c.authed(c.catalogPage))
	m.HandleFunc("GET "+p+"/pins", c.authed(c.pinsPage))
	m.HandleFunc("POST "+p+"/pins/approve", c.authed(c.adminOnly(c.approve)))
	m.HandleFunc("GET "+p+"/approvals", c.authed(c.approvalsPage))
	m.HandleFunc("POST "+p+"/approvals/answer", c.authed(c.adminOnly(c.answer)))
	m.HandleFunc("GET "+p+"/lessons", c.authed(c.lessonsPage))
	m.HandleFunc("POST "+p+"/lessons/forget", c.authed(c.adminOnly(c.forget)))
	m.HandleFunc("GET "+p+"/activity", c.authed(c.activityPage))
	m.HandleFunc("GET "+p+"/playground", c.authed(c.playgroundPage))
	c.mux = m
}

// ServeHTTP checks Host and Origin, then serves the page.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.opts.Door.HostAllowed(r.Host) {
		c.refuse(w, r, http.StatusForbidden, "host not allowed")
		return
	}
	changes := r.Method != http.MethodGet && r.Method != http.MethodHead
	if !c.originAllowed(r, changes) {
		c.refuse(w, r, http.StatusForbidden, "origin not allowed")
		return
	}
	if r.URL.Path == prefix {
		http.Redirect(w, r, prefix+"/", http.StatusFound)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make Chrome send "Origin: null" with a form
	h.Set("Cache-Control", "no-store")
	if changes {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	}
	c.mux.ServeHTTP(w, r)
}

func (c *Console) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	c.log.Warn("console request refused", "reason", why, "remote", c.opts.Door.ClientAddr(r), "method", r.Method, "path", r.URL.Path)
	http.Error(w, why, status)
}

// view is what every page template gets.
type view struct {
	Prefix string
	Page   string
	CSRF   string
	Login  bool // a login is needed (tokens are configured)
	// Caller is who logged in; only an administrative one (Caller.Admin) may restart upstreams,
	// approve pins and forget lessons.
	Caller frontdoor.Caller
	Data   any
	Flash  string
	// Notes are shown above every page's content (Options.Notes).
	Notes []string
}

// authed serves h to a request with a live session; it opens one at once when no login is needed,
// and checks the CSRF token of a POST.
func (c *Console) authed(h func(http.ResponseWriter, *http.Request, *view)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, sess, ok := c.sessionOf(r)
		if !ok && !c.opts.Door.TokensRequired() && r.Method == http.MethodGet {
			var id string
			// Loopback alone: the person at the machine.
			id, sess = c.sessions.open(frontdoor.Caller{Principal: frontdoor.LocalPrincipal, Wide: true, Admin: true})
			c.setCookie(w, r, id)
			ok = true
		}
		if !ok {
			if r.Method == http.MethodGet && r.Header.Get("HX-Request") == "" {
				http.Redirect(w, r, prefix+"/login", http.StatusSeeOther)
				return
			}
			w.Header().Set("HX-Redirect", prefix+"/login")
			http.Error(w, "not logged in", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && !csrfValid(r, sess) {
			c.refuse(w, r, http.StatusForbidden, "missing or wrong CSRF token")
			return
		}
		v := &view{Prefix: prefix, CSRF: sess.csrf, Login: c.opts.Door.TokensRequired(), Caller: sess.caller}
		if c.opts.Notes != nil {
			v.Notes = c.opts.Notes(r.Context())
		}
		h(w, r, v)
	}
}

// adminOnly serves h to an administrative caller alone; any other gets 403 saying what it takes.
func (c *Console) adminOnly(h func(http.ResponseWriter, *http.Request, *view)) func(http.ResponseWriter, *http.Request, *view) {
	return func(w http.ResponseWriter, r *http.Request, v *view) {
		if !v.Caller.Admin {
			c.log.Warn("console action refused: not an administrative token", "path", r.URL.Path, "principal", v.Caller.Principal)
			c.fail(w, r, v, http.StatusForbidden, errors.New("this action needs an administrative token (http.tokens[].admin: true)"))
			return
		}
		h(w, r, v)
	}
}

func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := c.sessionOf(r); ok || !c.opts.Door.TokensRequired() {
		http.Redirect(w, r, prefix+"/", http.StatusSeeOther)
		return
	}
	c.loginPage(w, r, http.StatusOK, "")
}

// loginPage shows the login form with flash, the reason a login failed.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request, status int, flash string) {
	c.render(w, r, status, "login", &view{Prefix: prefix, Login: true, Flash: flash})
}

// login exchanges a token for a session. Origin was checked: a login cannot be forced from another
// site.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	tok := r.PostFormValue("token")
	if !c.opts.Door.TokensRequired() {
		http.Redirect(w, r, prefix+"/", http.StatusSeeOther)
		return
	}
	source := c.opts.Door.ClientAddr(r)
	if !c.logins.allow(source) {
		w.Header().Set("Retry-After", "60")
		c.loginPage(w, r, http.StatusTooManyRequests, "Too many wrong tokens in the last minute; try again in a minute.")
		return
	}
	caller, ok := c.opts.Door.TokenCaller(tok)
	if !ok {
		c.logins.fail(source)
		c.log.Warn("console login refused", "remote", source)
		c.loginPage(w, r, http.StatusUnauthorized, "That token is not one of http.bearer_tokens.")
		return
	}
	if caller.Profile != "" { // the console shows this gateway's own profile
		c.log.Warn("console login refused: the token is restricted to another profile", "remote", source, "profile", caller.Profile)
		c.loginPage(w, r, http.StatusForbidden, "That token is restricted to the profile "+strconv.Quote(caller.Profile)+"; the console shows this gateway's own profile.")
		return
	}
	id, _ := c.sessions.open(caller)
	c.setCookie(w, r, id)
	http.Redirect(w, r, prefix+"/", http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, _ *view) {
	if id, _, ok := c.sessionOf(r); ok {
		c.sessions.close(id)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: prefix + "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, prefix+"/login", http.StatusSeeOther)
}

func (c *Console) home(w http.ResponseWriter, r *http.Request, _ *view) {
	http.Redirect(w, r, prefix+"/upstreams", http.StatusFound)
}

// render writes the page (one of pageNames), or only its fragment for an htmx request that names
// one.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) {
	t := c.pages[page]
	v.Page = page
	name := "layout"
	if r.Header.Get("HX-Request") != "" && r.Header.Get("HX-Target") != "" && t.Lookup("fragment") != nil {
		name = "fragment"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, v); err != nil {
		c.log.Warn("rendering console page", "page", page, "err", err)
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if _, err := w.Write(buf.Bytes()); err != nil {
		c.log.Warn("rendering console page", "page", page, "err", err)
	}
}

// fail shows an error where the page's content would be.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v *view, status int, err error) {
	v.Flash = err.Error()
	c.render(w, r, status, "error", v)
}

// navPages are the pages the header links to, in order.
var navPages = []string{"upstreams", "catalog", "pins", "approvals", "lessons", "activity", "playground"}

var pageNames = append([]string{"login", "error"}, navPages...)

func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"ago":   ago,
		"score": func(f float64) string { return fmt.Sprintf("%.3f", f) },
		"pct":   func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) },
		"dur":   roundDur,
		"clock": func(t time.Time) string { return t.Local().Format("15:04:05") },
		"date":  func(t time.Time) string { return t.Local().Format("2006-01-02 15:04") },
		"join":  strings.Join,
		"pages": func() []string { return navPages },
		// line writes control characters (ANSI escapes, newlines) of text from upstreams and
		// clients as escapes (class 11).
		"line":      printable.Line,
		"shorthash": integrity.ShortHash,
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// ago says how long ago t was, roughly.
func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// roundDur shows d to the millisecond, or the microsecond below one.
func roundDur(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
