package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

const (
	defaultMaxBytes = 1 << 20  // what fetch_url reads unless told otherwise
	maxMaxBytes     = 10 << 20 // the most fetch_url reads, and what extract_links reads
	maxRedirects    = 5
	userAgent       = "mcp-router/builtin-web"
	acceptHeader    = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8"
)

var fetchURLTool = mcp.NewTool("fetch_url", readOnly(true,
	mcp.WithDescription("Fetch a web page or file over HTTP(S) and return it as readable plain text: "+
		"HTML is converted to text (scripts, styles and other hidden markup removed, link text kept), "+
		"and text, JSON and Markdown pass through. Returns the page title, final URL after redirects, "+
		"HTTP status and content type. Binary files such as images or PDFs are refused, and so are loopback, "+
		"private-network and link-local addresses unless the server runs with --allow-private."),
	mcp.WithString("url", mcp.Required(), mcp.Description("The http:// or https:// URL to fetch.")),
	mcp.WithNumber("max_bytes", mcp.DefaultNumber(defaultMaxBytes), mcp.Max(maxMaxBytes), mcp.Min(1),
		mcp.Description("Read at most this many bytes of the response (default 1 MiB, at most 10 MiB); a longer response is truncated and says so.")),
	mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{`+
		`"title":{"type":"string"},"url":{"type":"string"},"status":{"type":"integer"},`+
		`"content_type":{"type":"string"},"text":{"type":"string"},"truncated":{"type":"boolean"}},`+
		`"required":["title","url","status","content_type","text","truncated"]}`)),
)...)

var extractLinksTool = mcp.NewTool("extract_links", readOnly(true,
	mcp.WithDescription("Fetch a web page over HTTP(S) and list the links on it: each link's absolute URL "+
		"(resolved against the page and its <base>, without #fragment) and its text, deduplicated, in page order. "+
		"Use it to find pages to fetch next. Loopback, private-network and link-local addresses are refused "+
		"unless the server runs with --allow-private."),
	mcp.WithString("url", mcp.Required(), mcp.Description("The http:// or https:// URL of an HTML page.")),
	mcp.WithRawOutputSchema(json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"},`+
		`"links":{"type":"array","items":{"type":"object","properties":{"url":{"type":"string"},"text":{"type":"string"}},"required":["url","text"]}}},`+
		`"required":["url","links"]}`)),
)...)

type web struct {
	client  *http.Client
	timeout time.Duration
}

// webOptions configures the web server; newWeb fills it from the command-line flags.
type webOptions struct {
	timeout time.Duration // for one fetch, redirects and body included; must be positive
	// allowPrivate lets fetches reach non-public addresses, through HTTP(S)_PROXY when set. Without
	// it the proxy settings are ignored: a proxy would connect out of the guard's sight.
	allowPrivate bool
	// allowAddr lets through the non-public addresses it returns true for: tests stand a loopback
	// server in for a public host (it sees the port, so a second loopback server stays private).
	allowAddr func(netip.AddrPort) bool
}

func newWeb(args []string) (*server.MCPServer, error) {
	fs := flag.NewFlagSet("web", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 20*time.Second, "time limit for one fetch, redirects and body included")
	allowPrivate := fs.Bool("allow-private", false, "also fetch loopback, private-network, link-local (cloud metadata) "+
		"and other non-public addresses, for local development; without it they are refused when connecting, "+
		"redirects included, and HTTP_PROXY/HTTPS_PROXY are ignored so that the check sees the real destination")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if *timeout <= 0 {
		return nil, fmt.Errorf("flag --timeout must be positive, got %s", *timeout)
	}
	return newWebServer(webOptions{timeout: *timeout, allowPrivate: *allowPrivate}), nil
}

func newWebServer(opts webOptions) *server.MCPServer {
	w := &web{client: newHTTPClient(opts), timeout: opts.timeout}
	srv := newServer("web")
	srv.AddTool(fetchURLTool, w.fetchURL)
	srv.AddTool(extractLinksTool, w.extractLinks)
	return srv
}

// newHTTPClient follows at most maxRedirects redirects, to http(s) URLs only, and unless
// opts.allowPrivate connects directly and only to public addresses.
func newHTTPClient(opts webOptions) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if !opts.allowPrivate {
		tr.DialContext = newGuard(net.DefaultResolver, opts.allowAddr).dialContext
		tr.Proxy = nil
	}
	return &http.Client{
		Transport: tr,
		Timeout:   opts.timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !isHTTP(req.URL) {
				return fmt.Errorf("refused a redirect to a %q URL: only http and https can be fetched", req.URL.Scheme)
			}
			if err := checkHost(req.URL.Hostname()); err != nil {
				return fmt.Errorf("refused a redirect to %s: %w", req.URL, err)
			}
			if len(via) > maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			return nil
		},
	}
}

type fetchResult struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Text        string `json:"text"`
	Truncated   bool   `json:"truncated"`
}

func (w *web) fetchURL(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := w.fetchText(ctx, req.GetArguments())
	if err != nil {
		return toolError("fetch_url", err), nil
	}
	return mcp.NewToolResultStructured(res, res.readable()), nil
}

func (w *web) fetchText(ctx context.Context, args map[string]any) (*fetchResult, error) {
	raw, err := stringArg(args, "url")
	if err != nil {
		return nil, err
	}
	limit, err := intArg(args, "max_bytes", defaultMaxBytes, maxMaxBytes)
	if err != nil {
		return nil, err
	}
	p, err := w.get(ctx, raw, int64(limit))
	if err != nil {
		return nil, err
	}
	res := &fetchResult{URL: p.url.String(), Status: p.status, ContentType: p.mediaType, Truncated: p.truncated}
	switch p.kind {
	case kindHTML:
		doc, err := html.Parse(strings.NewReader(p.text))
		if err != nil {
			return nil, fmt.Errorf("parsing the HTML of %s: %w", res.URL, err)
		}
		res.Title, res.Text = htmlTitle(doc), htmlToText(doc)
	case kindText:
		res.Text = p.text
	default:
		return nil, fmt.Errorf("%s returned %s content, which is binary and cannot be shown as text", res.URL, p.mediaType)
	}
	return res, nil
}

func (r *fetchResult) readable() string {
	var b strings.Builder
	if r.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", r.Title)
	}
	fmt.Fprintf(&b, "URL: %s\nStatus: %d\nContent-Type: %s\n\n%s", r.URL, r.Status, r.ContentType, r.Text)
	if r.Truncated {
		fmt.Fprintf(&b, "\n\n[Truncated: only the start of the response was read. Call again with a larger max_bytes (at most %d) for more.]", maxMaxBytes)
	}
	return b.String()
}

type linksResult struct {
	URL   string `json:"url"`
	Links []link `json:"links"`
}

func (w *web) extractLinks(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, truncated, err := w.links(ctx, req.GetArguments())
	if err != nil {
		return toolError("extract_links", err), nil
	}
	return mcp.NewToolResultStructured(res, res.readable(truncated)), nil
}

func (w *web) links(ctx context.Context, args map[string]any) (*linksResult, bool, error) {
	raw, err := stringArg(args, "url")
	if err != nil {
		return nil, false, err
	}
	p, err := w.get(ctx, raw, maxMaxBytes)
	if err != nil {
		return nil, false, err
	}
	if p.kind != kindHTML {
		return nil, false, fmt.Errorf("%s returned %s content, not an HTML page with links", p.url, p.mediaType)
	}
	doc, err := html.Parse(strings.NewReader(p.text))
	if err != nil {
		return nil, false, fmt.Errorf("parsing the HTML of %s: %w", p.url, err)
	}
	return &linksResult{URL: p.url.String(), Links: pageLinks(doc, p.url)}, p.truncated, nil
}

func (r *linksResult) readable(truncated bool) string {
	var b strings.Builder
	switch len(r.Links) {
	case 0:
		fmt.Fprintf(&b, "No links found on %s.", r.URL)
	case 1:
		fmt.Fprintf(&b, "1 link on %s:\n", r.URL)
	default:
		fmt.Fprintf(&b, "%d links on %s:\n", len(r.Links), r.URL)
	}
	for _, l := range r.Links {
		if l.Text == "" {
			fmt.Fprintf(&b, "\n- %s", l.URL)
		} else {
			fmt.Fprintf(&b, "\n- %s: %s", l.Text, l.URL)
		}
	}
	if truncated {
		fmt.Fprintf(&b, "\n\n[Truncated: only the first %d bytes of the page were read.]", maxMaxBytes)
	}
	return b.String()
}

type contentKind int

const (
	kindBinary contentKind = iota
	kindText
	kindHTML
)

// page is a fetched response body, decoded to UTF-8 when it is text.
type page struct {
	url       *url.URL // after redirects
	status    int
	mediaType string
	kind      contentKind
	text      string
	truncated bool
}

// get fetches raw, reading at most limit bytes of the body; an HTTP error status is an error.
func (w *web) get(ctx context.Context, raw string, limit int64) (*page, error) {
	u, err := checkURL(raw)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building a request for %s: %w", u, err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", acceptHeader)
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, w.describe(err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	if resp.StatusCode >= 400 {
		return nil, fmt.Errorf("GET %s returned HTTP %s", final, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response from %s: %w", final, w.describe(err))
	}
	p := &page{url: final, status: resp.StatusCode, truncated: int64(len(body)) > limit}
	if p.truncated {
		body = trimPartialRune(body[:limit])
	}
	header := resp.Header.Get("Content-Type")
	p.mediaType, p.kind = classify(header, body)
	if p.kind != kindBinary {
		p.text = decodeText(body, header)
	}
	return p, nil
}

// checkURL accepts absolute http(s) URLs whose host is a name or an IP address in its usual form.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %w", raw, err)
	}
	switch {
	case u.Scheme == "":
		return nil, fmt.Errorf("URL %q has no scheme: give a full http:// or https:// URL", raw)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("refused a %q URL: only http and https URLs can be fetched", u.Scheme)
	case u.Host == "":
		return nil, fmt.Errorf("URL %q has no host", raw)
	}
	if err := checkHost(u.Hostname()); err != nil {
		return nil, fmt.Errorf("refusing to fetch %s: %w", u, err)
	}
	return u, nil
}

func (w *web) describe(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		var be *blockedError
		if errors.As(ue.Err, &be) {
			return fmt.Errorf("refusing to fetch %s: %w; the web server was not started with --allow-private", ue.URL, be)
		}
		if ue.Timeout() {
			return fmt.Errorf("GET %s timed out after %s", ue.URL, w.timeout)
		}
		return fmt.Errorf("GET %s: %w", ue.URL, ue.Err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %s", w.timeout)
	}
	return err
}

// classify finds the media type from the Content-Type header, else by sniffing the body.
func classify(header string, body []byte) (string, contentKind) {
	mt, _, err := mime.ParseMediaType(header)
	if header == "" || err != nil {
		mt, _, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return mt, kindHTML
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"),
		textTypes[mt]:
		return mt, kindText
	}
	return mt, kindBinary
}

// textTypes are the non-text/* media types whose bodies are text.
var textTypes = map[string]bool{
	"application/json": true, "application/xml": true, "application/javascript": true,
	"application/ecmascript": true, "application/x-ndjson": true, "application/yaml": true,
	"application/x-yaml": true, "application/toml": true, "application/x-sh": true,
	"application/sql": true, "application/graphql": true,
}

// decodeText converts body to UTF-8 by the charset of the header, a BOM or an HTML <meta>; a valid
// UTF-8 body is taken as UTF-8 unless the header says otherwise.
func decodeText(body []byte, header string) string {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	enc, name, certain := charset.DetermineEncoding(body, header)
	if name != "utf-8" && enc != nil && (certain || !utf8.Valid(body)) {
		if out, err := enc.NewDecoder().Bytes(body); err == nil {
			body = out
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// trimPartialRune drops an incomplete UTF-8 sequence that truncation left at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
