package upstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

// Scrubber replaces the secret values an upstream is configured with
// (header, env, URL userinfo and query values) wherever they appear in
// text that came from or went through it: errors, logs, results. A value
// is a secret when integrity.SecretReason says so (NODE_ENV=production is
// a setting) and always in the URL's userinfo; it is matched as is,
// URL-escaped and base64-encoded, the forms in which a server echoes it.
type Scrubber struct {
	r      *strings.Replacer   // nil: nothing configured to scrub
	tokens func(string) string // replaces the OAuth tokens sent (nil: none)
}

// Empty reports whether s has nothing to scrub.
func (s *Scrubber) Empty() bool { return s == nil || s.r == nil && s.tokens == nil }

// minScrubbed is the shortest configured value treated as a secret.
const minScrubbed = 6

// ScrubbedValue replaces a configured secret in text.
const ScrubbedValue = "[redacted configured secret]"

// newScrubber collects cfg's secret values.
func newScrubber(cfg Config) *Scrubber {
	var values []string
	for k, v := range cfg.Headers {
		if integrity.SecretReason(k, v) != "" {
			values = append(values, headerSecrets(v)...)
		}
	}
	for k, v := range cfg.Env {
		if integrity.SecretReason(k, v) != "" {
			values = append(values, v)
		}
		values = append(values, urlSecrets(v)...) // a connection string in env
	}
	values = append(values, urlSecrets(cfg.URL)...)
	var pairs []string
	for _, v := range secretForms(values) {
		pairs = append(pairs, v, ScrubbedValue)
	}
	s := &Scrubber{}
	if cfg.Authorizer != nil {
		s.tokens = cfg.Authorizer.Redact
	}
	if len(pairs) > 0 {
		s.r = strings.NewReplacer(pairs...)
	}
	return s
}

// headerSecrets is a header value, its credentials without the scheme,
// and the user and password of Basic ones.
func headerSecrets(v string) []string {
	out := []string{v}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok {
		return out
	}
	cred = strings.TrimSpace(cred)
	out = append(out, cred)
	if strings.EqualFold(scheme, "basic") {
		if raw, err := base64.StdEncoding.DecodeString(cred); err == nil {
			user, pass, _ := strings.Cut(string(raw), ":")
			out = append(out, string(raw), user, pass)
		}
	}
	return out
}

// urlSecrets are the userinfo of raw and its query values that look like
// secrets. A user name is one only when no password follows it (a token
// passed as the user, https://TOKEN@host): beside a password it is a name
// like "postgres", and replacing every "postgres" a server says would
// blank its tools' descriptions.
func urlSecrets(raw string) []string {
	if !strings.Contains(raw, "://") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u == nil {
		return nil
	}
	var out []string
	if u.User != nil {
		out = append(out, u.User.String())
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		} else {
			out = append(out, u.User.Username())
		}
	}
	for k, vs := range u.Query() {
		for _, v := range vs {
			if integrity.SecretReason(k, v) != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// secretForms is every value at least minScrubbed long in the forms it
// may be echoed in, longest first so that a longer form wins.
func secretForms(values []string) []string {
	var out []string
	for _, v := range values {
		if len(v) < minScrubbed {
			continue
		}
		out = append(out, v, url.QueryEscape(v), url.PathEscape(v),
			base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
			base64.URLEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v)))
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// Text is t with every configured secret and sent token replaced.
func (s *Scrubber) Text(t string) string {
	if s.Empty() || t == "" {
		return t
	}
	if s.r != nil {
		t = s.r.Replace(t)
	}
	if s.tokens != nil {
		t = s.tokens(t)
	}
	return t
}

// lines is ls (a child's stderr) with every configured secret and every
// secret known by its shape replaced.
func (s *Scrubber) lines(ls []string) []string {
	for i, l := range ls {
		ls[i] = integrity.RedactSecrets(s.Text(l))
	}
	return ls
}

// sinkErr is Err with secrets known by their shape redacted as well.
func (s *Scrubber) sinkErr(err error) error {
	err = s.Err(err)
	if err == nil {
		return nil
	}
	if clean := integrity.RedactSecrets(err.Error()); clean != err.Error() {
		return &scrubbedError{msg: clean, err: err}
	}
	return err
}

// value is v (a decoded JSON value) with every configured secret replaced
// in its strings; ScrubbedValue needs no JSON escaping.
func (s *Scrubber) value(v any) any {
	if s.Empty() || v == nil {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	clean := s.Text(string(b))
	if clean == string(b) {
		return v
	}
	var out any
	if json.Unmarshal([]byte(clean), &out) != nil {
		return v
	}
	return out
}

// tools replaces, in place, the configured secrets in what a model reads
// of ts: titles, descriptions and schemas. Names, which clients send
// back, stay as listed.
func (s *Scrubber) tools(ts []mcp.Tool) {
	if s.Empty() {
		return
	}
	for i := range ts {
		t := &ts[i]
		t.Title, t.Description, t.Annotations.Title = s.Text(t.Title), s.Text(t.Description), s.Text(t.Annotations.Title)
		if t.RawInputSchema = s.schema(t.RawInputSchema, mcp.ToolArgumentsSchema(t.InputSchema)); t.RawInputSchema != nil {
			t.InputSchema = mcp.ToolInputSchema{}
		}
		if t.RawOutputSchema = s.schema(t.RawOutputSchema, mcp.ToolArgumentsSchema(t.OutputSchema)); t.RawOutputSchema != nil {
			t.OutputSchema = mcp.ToolOutputSchema{}
		}
	}
}

// schema is a tool's schema, raw or else typed, as raw JSON with the
// configured secrets replaced when it holds one; raw otherwise.
func (s *Scrubber) schema(raw json.RawMessage, typed mcp.ToolArgumentsSchema) json.RawMessage {
	b := []byte(raw)
	if raw == nil && typed.Type != "" {
		b, _ = json.Marshal(typed)
	}
	if clean := s.Text(string(b)); clean != string(b) {
		return json.RawMessage(clean)
	}
	return raw
}

// offer replaces, in place, the configured secrets in what a model reads
// of l's resources, templates and prompts. Names and URIs, which clients
// send back, stay as listed.
func (s *Scrubber) offer(l *Listing) {
	if s.Empty() {
		return
	}
	for i := range l.Resources {
		r := &l.Resources[i]
		r.Name, r.Title, r.Description = s.Text(r.Name), s.Text(r.Title), s.Text(r.Description)
	}
	for i := range l.Templates {
		r := &l.Templates[i]
		r.Name, r.Title, r.Description = s.Text(r.Name), s.Text(r.Title), s.Text(r.Description)
	}
	for i := range l.Prompts {
		p := &l.Prompts[i]
		p.Title, p.Description = s.Text(p.Title), s.Text(p.Description)
		for j := range p.Arguments {
			a := &p.Arguments[j]
			a.Title, a.Description = s.Text(a.Title), s.Text(a.Description)
		}
	}
}

// progress is n with the configured secrets in its message replaced.
func (s *Scrubber) progress(n mcp.JSONRPCNotification) mcp.JSONRPCNotification {
	msg, ok := n.Params.AdditionalFields["message"].(string)
	if !ok || s.Text(msg) == msg {
		return n
	}
	fields := maps.Clone(n.Params.AdditionalFields)
	fields["message"] = s.Text(msg)
	n.Params.AdditionalFields = fields
	return n
}

// Err is err with its text scrubbed; the chain stays for errors.Is.
func (s *Scrubber) Err(err error) error {
	if err == nil || s.Empty() {
		return err
	}
	msg := err.Error()
	if clean := s.Text(msg); clean != msg {
		return &scrubbedError{msg: clean, err: err}
	}
	return err
}

// scrubHandler is a slog.Handler that scrubs the message and every
// attribute of the records it passes on.
type scrubHandler struct {
	next  slog.Handler
	scrub *Scrubber
}

// scrubLogger wraps logger's handler with s, when there is one.
func scrubLogger(logger *slog.Logger, s *Scrubber) *slog.Logger {
	if logger == nil || s.Empty() {
		return logger
	}
	return slog.New(&scrubHandler{next: logger.Handler(), scrub: s})
}

func (h *scrubHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.scrub.Text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &scrubHandler{next: h.next.WithAttrs(clean), scrub: h.scrub}
}

func (h *scrubHandler) WithGroup(name string) slog.Handler {
	return &scrubHandler{next: h.next.WithGroup(name), scrub: h.scrub}
}

// attr scrubs one attribute; groups are scrubbed member by member.
func (h *scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.scrub.Text(v.String()))
	case slog.KindGroup:
		members := v.Group()
		clean := make([]any, len(members))
		for i, m := range members {
			clean[i] = h.attr(m)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.Any(a.Key, h.scrub.Err(err))
		}
		if v.Any() == nil {
			return a
		}
		s := fmt.Sprint(v.Any())
		if clean := h.scrub.Text(s); clean != s {
			return slog.String(a.Key, clean)
		}
	}
	return a
}

// WithoutURL is err's text for a person or a model: an HTTP upstream's
// URL, which may carry credentials, kept out, and each cause said once
// (mcp-go wraps a failed POST twice in "failed to send request: "); the
// chain stays for errors.Is.
func WithoutURL(err error) error {
	if err == nil {
		return nil
	}
	msg := sayOnce(err.Error())
	var ue *url.Error
	if errors.As(err, &ue) && ue.URL != "" {
		msg = strings.ReplaceAll(msg, ue.URL, "<upstream url>")
	}
	if msg == err.Error() {
		return err
	}
	return &scrubbedError{msg: msg, err: err}
}

// sayOnce is msg without a cause that repeats the one before it.
func sayOnce(msg string) string {
	causes := strings.Split(msg, ": ")
	kept := causes[:1]
	for _, c := range causes[1:] {
		if c != kept[len(kept)-1] {
			kept = append(kept, c)
		}
	}
	return strings.Join(kept, ": ")
}

// WithText is err shown as msg, with err's chain kept for errors.Is.
func WithText(msg string, err error) error { return &scrubbedError{msg: msg, err: err} }

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
