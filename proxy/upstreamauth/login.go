package upstreamauth

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mcp-router/mcp-router/internal/loopback"
)

// LoginOptions configure Login.
type LoginOptions struct {
	// Upstream and URL name the upstream and where it lives.
	Upstream, URL string
	// Principal is the caller the login is for; "" is the gateway's own.
	Principal string
	// Config is its auth settings (nil: none).
	Config *Config
	// Vault receives the login (required).
	Vault *Vault
	// HTTPClient reaches the upstream and its authorization server; nil
	// means a new one. It is bounded (see boundClient).
	HTTPClient *http.Client
	// Show is given the authorization URL to open in a browser (required).
	Show func(authURL string)
}

// Login runs the authorization code flow for one upstream and stores the
// tokens it yields, returning once the code was exchanged or ctx ended.
func Login(ctx context.Context, opts LoginOptions) (*Record, error) {
	cfg := Config{}
	if opts.Config != nil {
		cfg = *opts.Config
	}
	client := boundClient(opts.HTTPClient)
	ln, redirect, err := listenLoopback(cfg.RedirectURL)
	if err != nil {
		return nil, err
	}
	defer ln.Close()

	ch, err := challenge(ctx, client, opts.URL)
	if err != nil {
		return nil, err
	}
	if err := ownOrigin(opts.URL, ch.resourceMetadata); err != nil {
		return nil, fmt.Errorf("logging in to %s: %w", opts.Upstream, err)
	}
	prm := findResourceMetadata(ctx, client, opts.URL, ch.resourceMetadata)
	rec := &Record{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, AuthMethod: cfg.AuthMethod, ResourceMetadataURL: prm.url,
		ResourceMetadataRoot: prm.root}
	probe := newHandler(opts.URL, rec, redirect, transport.NewMemoryTokenStore(), client)
	md, err := probe.GetServerMetadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("finding the authorization server of %s: %w", opts.Upstream, err)
	}
	if !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("the authorization server of %s does not list PKCE with S256 (code_challenge_methods_supported): MCP clients must not log in there", opts.Upstream)
	}
	rec.Issuer = md.Issuer
	if tu, err := url.Parse(md.TokenEndpoint); err == nil {
		rec.TokenEndpoint = endpointOf(tu)
	}
	rec.Scopes = chooseScopes(cfg.Scopes, ch, prm)
	if prev, err := opts.Vault.Load(ctx, opts.URL, opts.Principal); err == nil { // a step-up
		rec.Scopes = union(union(rec.Scopes, prev.Scopes), prev.ScopesNeeded)
	}

	mem := transport.NewMemoryTokenStore()
	h, err := chooseClient(ctx, opts, cfg, rec, md, redirect, mem, client)
	if err != nil {
		return nil, err
	}

	verifier, err := transport.GenerateCodeVerifier()
	if err != nil {
		return nil, err
	}
	state, err := transport.GenerateState()
	if err != nil {
		return nil, err
	}
	authURL, err := h.GetAuthorizationURL(ctx, state, transport.GenerateCodeChallenge(verifier))
	if err != nil {
		return nil, fmt.Errorf("building the authorization URL of %s: %w", opts.Upstream, err)
	}
	opts.Show(authURL)
	code, gotState, err := awaitRedirect(ctx, ln, redirect, state)
	if err != nil {
		return nil, err
	}
	if err := h.ProcessAuthorizationResponse(ctx, code, gotState, verifier); err != nil {
		return nil, fmt.Errorf("exchanging the authorization code of %s: %w", opts.Upstream, err)
	}
	tok, err := mem.GetToken(ctx)
	if err != nil || tok.AccessToken == "" {
		return nil, fmt.Errorf("the authorization server of %s sent no access token", opts.Upstream)
	}
	rec.Token = *tok
	if err := opts.Vault.Save(ctx, opts.URL, opts.Principal, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// chooseClient sets rec's client: the pre-registered one, else a client
// ID metadata document, else one registered now (RFC 7591), and returns
// mcp-go's handler for it.
func chooseClient(ctx context.Context, opts LoginOptions, cfg Config, rec *Record, md *transport.AuthServerMetadata, redirect string,
	mem transport.TokenStore, client *http.Client) (*transport.OAuthHandler, error) {
	switch {
	case rec.ClientID != "":
		return newHandler(opts.URL, rec, redirect, mem, client), nil
	case cfg.ClientMetadataURL != "" && supportsMetadataDocuments(ctx, client, md.Issuer):
		rec.ClientID, rec.AuthMethod = cfg.ClientMetadataURL, "none"
		return newHandler(opts.URL, rec, redirect, mem, client), nil
	case md.RegistrationEndpoint != "":
		h := newHandler(opts.URL, rec, redirect, mem, client)
		if err := h.RegisterClient(ctx, "mcp-router"); err != nil {
			return nil, fmt.Errorf("registering with the authorization server of %s: %w", opts.Upstream, err)
		}
		rec.ClientID, rec.ClientSecret, rec.AuthMethod = h.GetClientID(), h.GetClientSecret(), h.GetTokenEndpointAuthMethod()
		return h, nil
	default:
		return nil, fmt.Errorf("the authorization server of %s offers no client registration: register a client there and set auth.client_id (and auth.client_secret) for %s",
			opts.Upstream, opts.Upstream)
	}
}

// listenLoopback listens where redirect (default http://127.0.0.1:0/callback)
// says, which must be http on a loopback address.
func listenLoopback(redirect string) (net.Listener, string, error) {
	if redirect == "" {
		redirect = "http://127.0.0.1:0/callback"
	}
	u, err := url.Parse(redirect)
	if err != nil || u.Scheme != "http" || u.Port() == "" {
		return nil, "", fmt.Errorf("auth.redirect_url %q: want http://127.0.0.1:PORT/PATH (or localhost)", redirect)
	}
	if !loopback.Host(u.Hostname()) {
		return nil, "", fmt.Errorf("auth.redirect_url %q: not a loopback address", redirect)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(u.Hostname(), u.Port()))
	if err != nil {
		return nil, "", fmt.Errorf("listening for the login redirect: %w", err)
	}
	u.Host = net.JoinHostPort(u.Hostname(), fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	if u.Path == "" {
		u.Path = "/"
	}
	return ln, u.String(), nil
}

// awaitRedirect serves ln until the redirect of the login with state
// comes and returns its code and state. A redirect with another state (a
// page that found the port) gets 400 and leaves the login waiting.
func awaitRedirect(ctx context.Context, ln net.Listener, redirect, want string) (code, state string, err error) {
	u, _ := url.Parse(redirect)
	type answer struct{ code, state, err string }
	got := make(chan answer, 1)
	mux := http.NewServeMux()
	mux.HandleFunc(u.Path, func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Host, u.Host) { // a page that rebound a name to this port
			http.Error(w, "host not allowed", http.StatusForbidden)
			return
		}
		q := r.URL.Query()
		a := answer{code: q.Get("code"), state: q.Get("state")}
		if subtle.ConstantTimeCompare([]byte(a.state), []byte(want)) != 1 {
			http.Error(w, "not the redirect of the login in progress", http.StatusBadRequest)
			return
		}
		if e := q.Get("error"); e != "" || a.code == "" {
			a.err = oauthReason(cmp.Or(e, "no code"), q.Get("error_description"))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if a.err != "" {
			fmt.Fprintf(w, "<p>mcp-router: the login failed: %s</p>", html.EscapeString(a.err))
		} else {
			fmt.Fprint(w, "<p>mcp-router: logged in. You can close this window.</p>")
		}
		select {
		case got <- a:
		default:
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }() // ends with Shutdown below
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
	}()
	select {
	case a := <-got:
		if a.err != "" {
			return "", "", fmt.Errorf("the authorization server refused the login: %s", a.err)
		}
		return a.code, a.state, nil
	case <-ctx.Done():
		return "", "", fmt.Errorf("waiting for the login redirect: %w", ctx.Err())
	}
}

// challengeInfo is what an upstream's 401 said (RFC 6750, RFC 9728).
type challengeInfo struct {
	resourceMetadata string
	scope            string
}

// challenge reads the WWW-Authenticate of the upstream's 401 to an
// initialize without credentials, or, past it, to tools/list.
func challenge(ctx context.Context, client *http.Client, upstreamURL string) (challengeInfo, error) {
	resp, err := post(ctx, client, upstreamURL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":"mcp-router","version":"login"}}}`)
	if err != nil {
		return challengeInfo{}, err
	}
	if resp.StatusCode/100 == 2 {
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp, err = post(ctx, client, upstreamURL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			return challengeInfo{}, err
		}
		if resp.StatusCode != http.StatusUnauthorized {
			resp, err = post(ctx, client, upstreamURL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			if err != nil {
				return challengeInfo{}, err
			}
		}
	}
	if resp.StatusCode != http.StatusUnauthorized {
		return challengeInfo{}, fmt.Errorf("the upstream answered HTTP %d, not 401: it does not ask for a login", resp.StatusCode)
	}
	return challengeOf(resp.Header), nil
}

// post sends one JSON-RPC message; the response's body is drained (at
// most 64 KiB) and closed.
func post(ctx context.Context, client *http.Client, upstreamURL, session, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, upstreamURL, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reaching the upstream: %w", withoutQuery(err))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp, nil
}

// challengeOf reads the Bearer challenges of a 401 or 403.
func challengeOf(h http.Header) challengeInfo {
	var ci challengeInfo
	for _, v := range h.Values("WWW-Authenticate") {
		params := bearerParams(v)
		if params == nil {
			continue
		}
		if ci.resourceMetadata == "" {
			ci.resourceMetadata = params["resource_metadata"]
		}
		if ci.scope == "" {
			ci.scope = params["scope"]
		}
	}
	return ci
}

// bearerParams parses the auth-params of a Bearer challenge; nil when v
// is another scheme.
func bearerParams(v string) map[string]string {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(v), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	out := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimLeft(strings.TrimSpace(rest), ",") {
		rest = strings.TrimSpace(rest)
		k, after, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		k = strings.ToLower(strings.TrimSpace(k))
		after = strings.TrimSpace(after)
		var val string
		if strings.HasPrefix(after, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(after) && after[i] != '"'; i++ {
				if after[i] == '\\' && i+1 < len(after) {
					i++
				}
				b.WriteByte(after[i])
			}
			val, rest = b.String(), after[min(i+1, len(after)):]
		} else {
			val, rest, _ = strings.Cut(after, ",")
			val = strings.TrimSpace(val)
		}
		if _, dup := out[k]; !dup {
			out[k] = val
		}
	}
	return out
}

// chooseScopes picks the scopes to ask for, in the MCP authorization
// spec's order (see Config.Scopes).
func chooseScopes(configured []string, ch challengeInfo, prm resourceMetadata) []string {
	switch {
	case len(configured) > 0:
		return configured
	case ch.scope != "":
		return strings.Fields(ch.scope)
	default:
		return prm.ScopesSupported
	}
}

// resourceMetadata is what mcp-go's discovery does not keep of a
// protected resource's metadata (RFC 9728), and where it was found.
type resourceMetadata struct {
	Resource        string   `json:"resource"`
	ScopesSupported []string `json:"scopes_supported"`
	url             string   // the challenge's URL, for mcp-go
	root            string   // set when found at the root well-known URL only
}

// findResourceMetadata fetches the upstream's protected resource
// metadata from the first of resourceMetadataURLs that serves it.
func findResourceMetadata(ctx context.Context, client *http.Client, upstreamURL, advertised string) resourceMetadata {
	urls := resourceMetadataURLs(upstreamURL, advertised)
	for i, u := range urls {
		var md resourceMetadata
		if getJSON(ctx, client, u, &md) != nil {
			continue
		}
		switch {
		case advertised != "":
			md.url = advertised
		case i > 0:
			md.root = u
		}
		return md
	}
	return resourceMetadata{url: advertised}
}

// ownOrigin refuses resource metadata named by a challenge at another
// origin than the upstream's: a resource serves its own metadata (RFC
// 9728 section 3.2), and it names the authorization server the login and
// its token go to.
func ownOrigin(upstreamURL, advertised string) error {
	if advertised == "" {
		return nil
	}
	up, err := url.Parse(upstreamURL)
	if err != nil {
		return err
	}
	md, err := url.Parse(advertised)
	if err != nil || !strings.EqualFold(md.Scheme, up.Scheme) || !strings.EqualFold(md.Host, up.Host) {
		return fmt.Errorf("its 401 names resource metadata at another origin than its own (%s, not %s://%s)",
			redactURL(advertised), up.Scheme, up.Host)
	}
	return nil
}

// resourceMetadataURLs are where protected resource metadata may be: the
// challenge's URL, else the path-aware and then the root well-known URL
// (RFC 9728 section 3.1).
func resourceMetadataURLs(upstreamURL, advertised string) []string {
	if advertised != "" {
		return []string{advertised}
	}
	u, err := url.Parse(upstreamURL)
	if err != nil {
		return nil
	}
	root := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		return []string{root + p, root}
	}
	return []string{root}
}

// supportsMetadataDocuments reports whether issuer takes client ID metadata documents.
func supportsMetadataDocuments(ctx context.Context, client *http.Client, issuer string) bool {
	var md struct {
		Supported bool `json:"client_id_metadata_document_supported"`
	}
	for _, u := range authServerMetadataURLs(issuer) {
		if getJSON(ctx, client, u, &md) == nil {
			return md.Supported
		}
	}
	return false
}

// authServerMetadataURLs are the RFC 8414 and OpenID discovery URLs of an
// issuer, in the order the MCP authorization spec tries them.
func authServerMetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil
	}
	base, p := u.Scheme+"://"+u.Host, strings.Trim(u.EscapedPath(), "/")
	if p == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}
	}
	return []string{base + "/.well-known/oauth-authorization-server/" + p, base + "/.well-known/openid-configuration/" + p,
		base + "/" + p + "/.well-known/openid-configuration"}
}

// getJSON decodes the JSON at u (200 only; boundClient bounds it) into v.
func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// withoutQuery keeps a URL's query (which may hold a key) out of err.
func withoutQuery(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
