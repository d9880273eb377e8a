package builtin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

const testPage = `<!DOCTYPE html>
<html><head><title>  Test
  Page </title>
<style>body { color: red }</style>
<script>var hidden = "secret script";</script>
</head>
<body>
<nav><a href="/home">Home</a></nav>
<h1>Main heading</h1>
<p>First   paragraph with a <a href="/docs">link to docs</a>.</p>
<noscript>enable javascript</noscript>
<ul><li>one</li><li>two</li></ul>
<svg><text>svg text</text></svg>
<template><p>template text</p></template>
</body></html>`

const testPageText = "Home\n\n# Main heading\n\nFirst paragraph with a link to docs.\n\n- one\n- two"

const linksPage = `<html><head><base href="/sub/dir/"></head><body>
<a href="page.html">Relative</a>
<a href="../up.html">Up</a>
<a href="/abs">Absolute path</a>
<a href="https://example.org/x#frag">External</a>
<a href="https://example.org/x">External again</a>
<a href="#top">Top</a>
<a href="javascript:alert(1)">Script</a>
<a href="mailto:someone@example.org">Mail</a>
<a href="data:text/plain,hi">Data</a>
<a href="page.html"><img alt="Same page as an image"></a>
<a href="image-only"></a>
<a href="image-only"><img src="x.png" alt="Picture"></a>
<a href="  spaced  ">  Spaced
   text </a>
<a>No href</a>
<map><area href="area.html" alt="Area"></map>
</body></html>`

// newSite serves the pages the web tests fetch.
func newSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	serve := func(pattern, contentType, body string) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = []string{contentType}
			if contentType == "" {
				w.Header()["Content-Type"] = nil // no header at all, rather than a sniffed one
			}
			fmt.Fprint(w, body)
		})
	}
	serve("/page", "text/html; charset=utf-8", testPage)
	serve("/links", "text/html", linksPage)
	serve("/new/page.html", "text/html", `<a href="next.html">Next</a> <a href="/">Home</a>`)
	serve("/plain", "text/plain", "line one\n\n  line   two\n")
	serve("/json", "application/json", `{"a": [1, 2]}`)
	serve("/markdown", "text/markdown; charset=utf-8", "# Title\n\nSome *markdown*.")
	serve("/latin1", "text/html; charset=iso-8859-1", "<p>caf\xe9</p>")
	serve("/sniffed", "", "<html><head><title>Sniffed</title></head><body><p>Body</p></body></html>")
	serve("/image.png", "image/png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	serve("/big", "text/plain", strings.Repeat("0123456789", 300))
	serve("/accents", "text/plain; charset=utf-8", strings.Repeat("é", 100))
	mux.HandleFunc("/ua", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, r.UserAgent())
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database on fire", http.StatusInternalServerError)
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n <= 1 {
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		http.Redirect(w, r, "/redirect/"+strconv.Itoa(n-1), http.StatusMovedPermanently)
	})
	mux.HandleFunc("/old/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new/page.html", http.StatusSeeOther)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // until the client gives up
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchURL(t *testing.T) {
	site := newSite(t)
	c := start(t, "web", "--allow-private") // newSite listens on loopback
	tests := []struct {
		name string
		path string
		args map[string]any // besides url
		want fetchResult    // URL is relative to the site
	}{
		{"HTML becomes readable text", "/page", nil,
			fetchResult{Title: "Test Page", URL: "/page", Status: 200, ContentType: "text/html", Text: testPageText}},
		{"redirects are followed", "/redirect/5", nil,
			fetchResult{Title: "Test Page", URL: "/page", Status: 200, ContentType: "text/html", Text: testPageText}},
		{"plain text passes through", "/plain", nil,
			fetchResult{URL: "/plain", Status: 200, ContentType: "text/plain", Text: "line one\n\n  line   two\n"}},
		{"JSON passes through", "/json", nil,
			fetchResult{URL: "/json", Status: 200, ContentType: "application/json", Text: `{"a": [1, 2]}`}},
		{"Markdown passes through", "/markdown", nil,
			fetchResult{URL: "/markdown", Status: 200, ContentType: "text/markdown", Text: "# Title\n\nSome *markdown*."}},
		{"the charset is decoded", "/latin1", nil,
			fetchResult{URL: "/latin1", Status: 200, ContentType: "text/html", Text: "café"}},
		{"a missing content type is sniffed", "/sniffed", nil,
			fetchResult{Title: "Sniffed", URL: "/sniffed", Status: 200, ContentType: "text/html", Text: "Body"}},
		{"the user agent names mcp-router", "/ua", nil,
			fetchResult{URL: "/ua", Status: 200, ContentType: "text/plain", Text: userAgent}},
		{"a long body is truncated", "/big", map[string]any{"max_bytes": 25},
			fetchResult{URL: "/big", Status: 200, ContentType: "text/plain", Text: "0123456789012345678901234", Truncated: true}},
		{"truncation keeps whole characters", "/accents", map[string]any{"max_bytes": 5},
			fetchResult{URL: "/accents", Status: 200, ContentType: "text/plain", Text: "éé", Truncated: true}},
		{"a body of exactly max_bytes is whole", "/big", map[string]any{"max_bytes": 3000},
			fetchResult{URL: "/big", Status: 200, ContentType: "text/plain", Text: strings.Repeat("0123456789", 300)}},
		{"max_bytes above the cap is capped", "/plain", map[string]any{"max_bytes": 1e12},
			fetchResult{URL: "/plain", Status: 200, ContentType: "text/plain", Text: "line one\n\n  line   two\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"url": site.URL + tt.path}
			for k, v := range tt.args {
				args[k] = v
			}
			res := call(t, c, "fetch_url", args)
			got := structured[fetchResult](t, res)
			want := tt.want
			want.URL = site.URL + want.URL
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fetch_url(%s) mismatch (-want +got):\n%s", tt.path, diff)
			}
			if !strings.Contains(text(res), got.Text) || !strings.Contains(text(res), "URL: "+got.URL) {
				t.Errorf("text content: got %q, want it to hold the URL and the text %q", text(res), got.Text)
			}
			if got.Truncated != strings.Contains(text(res), "Truncated") {
				t.Errorf("text content %q: got truncation notice %v, want %v", text(res), !got.Truncated, got.Truncated)
			}
		})
	}
}

func TestWebErrors(t *testing.T) {
	site := newSite(t)
	c := start(t, "web", "--allow-private") // newSite listens on loopback
	tests := []struct {
		name  string
		tools []string
		args  map[string]any
		wants []string
	}{
		{"file URL", nil, map[string]any{"url": "file:///etc/passwd"}, []string{`"file"`, "only http and https"}},
		{"ftp URL", nil, map[string]any{"url": "ftp://example.org/x"}, []string{`"ftp"`, "only http and https"}},
		{"javascript URL", nil, map[string]any{"url": "javascript:alert(1)"}, []string{`"javascript"`}},
		{"data URL", nil, map[string]any{"url": "data:text/plain,hi"}, []string{`"data"`}},
		{"no scheme", nil, map[string]any{"url": "example.org/page"}, []string{"no scheme", "https://"}},
		{"no host", nil, map[string]any{"url": "http:///path"}, []string{"no host"}},
		{"missing url", nil, map[string]any{}, []string{`"url"`, "required"}},
		{"empty url", nil, map[string]any{"url": "  "}, []string{`"url"`, "empty"}},
		{"url not a string", nil, map[string]any{"url": 42}, []string{`"url"`, "string"}},
		{"not found", nil, map[string]any{"url": site.URL + "/missing"}, []string{"HTTP 404 Not Found", "/missing"}},
		{"server error", nil, map[string]any{"url": site.URL + "/broken"}, []string{"HTTP 500"}},
		{"too many redirects", nil, map[string]any{"url": site.URL + "/redirect/6"}, []string{"stopped after 5 redirects"}},
		{"redirect to a file URL", nil, map[string]any{"url": site.URL + "/to-file"}, []string{"redirect", `"file"`}},
		{"binary content", []string{"fetch_url"}, map[string]any{"url": site.URL + "/image.png"}, []string{"image/png", "binary"}},
		{"links of a binary", []string{"extract_links"}, map[string]any{"url": site.URL + "/image.png"}, []string{"image/png", "not an HTML page"}},
		{"links of plain text", []string{"extract_links"}, map[string]any{"url": site.URL + "/plain"}, []string{"text/plain", "not an HTML page"}},
		{"zero max_bytes", []string{"fetch_url"}, map[string]any{"url": site.URL + "/page", "max_bytes": 0}, []string{`"max_bytes"`, "at least 1"}},
		{"fractional max_bytes", []string{"fetch_url"}, map[string]any{"url": site.URL + "/page", "max_bytes": 1.5}, []string{`"max_bytes"`, "whole number"}},
	}
	for _, tt := range tests {
		tools := tt.tools
		if tools == nil {
			tools = []string{"fetch_url", "extract_links"}
		}
		for _, tool := range tools {
			t.Run(tool+"/"+tt.name, func(t *testing.T) {
				res := call(t, c, tool, tt.args)
				wantError(t, res, append([]string{tool + ":"}, tt.wants...)...)
			})
		}
	}
}

func TestFetchURLTimesOut(t *testing.T) {
	site := newSite(t)
	c := start(t, "web", "--allow-private", "--timeout", "50ms")
	res := call(t, c, "fetch_url", map[string]any{"url": site.URL + "/slow"})
	wantError(t, res, "fetch_url:", "timed out after 50ms")
}

func TestExtractLinks(t *testing.T) {
	site := newSite(t)
	c := start(t, "web", "--allow-private") // newSite listens on loopback
	tests := []struct {
		name    string
		path    string
		wantURL string
		want    []link
	}{
		{"resolved against <base>, deduplicated, in order", "/links", "/links", []link{
			{site.URL + "/sub/dir/page.html", "Relative"},
			{site.URL + "/sub/up.html", "Up"},
			{site.URL + "/abs", "Absolute path"},
			{"https://example.org/x", "External"},
			{site.URL + "/sub/dir/", "Top"},
			{site.URL + "/sub/dir/image-only", "Picture"},
			{site.URL + "/sub/dir/spaced", "Spaced text"},
			{site.URL + "/sub/dir/area.html", "Area"},
		}},
		{"resolved against the URL after redirects", "/old/", "/new/page.html", []link{
			{site.URL + "/new/next.html", "Next"},
			{site.URL + "/", "Home"},
		}},
		{"a page without links", "/sniffed", "/sniffed", []link{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "extract_links", map[string]any{"url": site.URL + tt.path})
			got := structured[linksResult](t, res)
			want := linksResult{URL: site.URL + tt.wantURL, Links: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("extract_links(%s) mismatch (-want +got):\n%s", tt.path, diff)
			}
			for _, l := range tt.want {
				if !strings.Contains(text(res), l.URL) {
					t.Errorf("text content %q: missing link %s", text(res), l.URL)
				}
			}
		})
	}
}

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		header string
		want   string
	}{
		{"UTF-8 without a charset", "naïve — ok", "text/plain", "naïve — ok"},
		{"UTF-8 after a long ASCII start", strings.Repeat("a", 2000) + "é", "text/plain", strings.Repeat("a", 2000) + "é"},
		{"byte-order mark is dropped", "\xef\xbb\xbfhi", "text/plain", "hi"},
		{"charset from the header", "caf\xe9", "text/plain; charset=iso-8859-1", "café"},
		{"charset from a meta tag", `<meta charset="windows-1252"><p>caf` + "\xe9", "text/html", `<meta charset="windows-1252"><p>café`},
		{"Latin-1 bytes without a charset", "caf\xe9", "text/plain", "café"},
		{"invalid UTF-8 declared as UTF-8", "a\xffb", "text/plain; charset=utf-8", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeText([]byte(tt.body), tt.header)
			if got != tt.want {
				t.Errorf("decodeText(%q, %q): got %q, want %q", tt.body, tt.header, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("decodeText(%q, %q): got invalid UTF-8 %q", tt.body, tt.header, got)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name     string
		header   string
		body     string
		wantType string
		wantKind contentKind
	}{
		{"HTML with a charset", "text/html; charset=utf-8", "", "text/html", kindHTML},
		{"XHTML", "application/xhtml+xml", "", "application/xhtml+xml", kindHTML},
		{"upper-case text type", "TEXT/PLAIN", "", "text/plain", kindText},
		{"JSON suffix", "application/ld+json", "", "application/ld+json", kindText},
		{"XML suffix", "application/rss+xml", "", "application/rss+xml", kindText},
		{"YAML", "application/x-yaml", "", "application/x-yaml", kindText},
		{"PDF", "application/pdf", "%PDF-1.7", "application/pdf", kindBinary},
		{"octet stream", "application/octet-stream", "", "application/octet-stream", kindBinary},
		{"no header, HTML body", "", "<!DOCTYPE html><p>hi", "text/html", kindHTML},
		{"no header, text body", "", "just words", "text/plain", kindText},
		{"malformed header, binary body", "not a media type", "\x00\x01\x02", "application/octet-stream", kindBinary},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotType, gotKind := classify(tt.header, []byte(tt.body))
			if gotType != tt.wantType || gotKind != tt.wantKind {
				t.Errorf("classify(%q, %q): got %q, %v; want %q, %v", tt.header, tt.body, gotType, gotKind, tt.wantType, tt.wantKind)
			}
		})
	}
}
