package builtin

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

func parseHTML(t testing.TB, s string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatalf("html.Parse(%q): %v", s, err)
	}
	return doc
}

func TestHTMLToText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"whitespace collapses", "<p>a   b\n\t c</p>", "a b c"},
		{"inline elements join", "<p>foo<b>bar</b> <i>baz</i></p>", "foobar baz"},
		{"link text is kept", `<p>see <a href="/x">the   docs</a>.</p>`, "see the docs."},
		{"divs are lines", "<div>one</div><div>two</div>", "one\ntwo"},
		{"paragraphs are separated by a blank line", "<p>one</p><p>two</p>", "one\n\ntwo"},
		{"br breaks a line", "a<br>b<br><br>c", "a\nb\nc"},
		{"headings are marked", "<h2>Title</h2><p>x</p>", "## Title\n\nx"},
		{"an empty heading leaves no marker", "<h1></h1><p>x</p>", "x"},
		{"unordered lists", "<ul><li>a</li><li>b</li></ul>", "- a\n- b"},
		{"ordered lists are numbered", "<ol><li>a</li><li>b</li><li>c</li></ol>", "1. a\n2. b\n3. c"},
		{"nested lists", "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "- a\n- b\n- c"},
		{"table rows are lines, cells are separated", "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>", "k | v\na | 1"},
		{"pre keeps its whitespace", "<p>x</p><pre>  a\n    b</pre><p>y</p>", "x\n\n  a\n    b\n\ny"},
		{"script and style are dropped", "<p>a<script>x()</script><style>p{}</style>b</p>", "ab"},
		{"noscript, template, svg and iframe are dropped", "<p>a</p><noscript>n</noscript><template>t</template><svg><text>s</text></svg><iframe>i</iframe><p>b</p>", "a\n\nb"},
		{"head content is dropped", "<html><head><title>T</title><meta name=x content=y></head><body>b</body></html>", "b"},
		{"comments are dropped", "<p>a<!-- hidden -->b</p>", "ab"},
		{"entities are decoded", "<p>a &amp; b &lt;c&gt;&nbsp;d</p>", "a & b <c> d"},
		{"malformed HTML is repaired", "<p>unclosed <b>bold<p>next", "unclosed bold\n\nnext"},
		{"nothing but markup", "<div><span> </span></div>", ""},
		{"empty input", "", ""},
		{"plain text", "just text", "just text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := htmlToText(parseHTML(t, tt.in)); got != tt.want {
				t.Errorf("htmlToText(%q): got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHTMLTitle(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"title in head", "<head><title> A \n title </title></head>", "A title"},
		{"first title wins", "<title>one</title><title>two</title>", "one"},
		{"svg titles do not count", "<body><svg><title>icon</title></svg></body>", ""},
		{"no title", "<p>x</p>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := htmlTitle(parseHTML(t, tt.in)); got != tt.want {
				t.Errorf("htmlTitle(%q): got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPageLinksBase(t *testing.T) {
	page, _ := url.Parse("https://example.org/a/b.html")
	tests := []struct {
		name string
		in   string
		want string // the URL of the only link
	}{
		{"relative to the page", `<a href="c.html">c</a>`, "https://example.org/a/c.html"},
		{"relative base", `<base href="/x/"><a href="c.html">c</a>`, "https://example.org/x/c.html"},
		{"absolute base", `<base href="https://cdn.example.net/d/"><a href="c.html">c</a>`, "https://cdn.example.net/d/c.html"},
		{"base without href is ignored", `<base target="_blank"><base href="/y/"><a href="c">c</a>`, "https://example.org/y/c"},
		{"non-http base is ignored", `<base href="javascript:void(0)"><a href="c.html">c</a>`, "https://example.org/a/c.html"},
		{"scheme-relative link", `<a href="//other.example/p">p</a>`, "https://other.example/p"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			links := pageLinks(parseHTML(t, tt.in), page)
			if len(links) != 1 || links[0].URL != tt.want {
				t.Errorf("pageLinks(%q): got %v, want one link to %s", tt.in, links, tt.want)
			}
		})
	}
}

// FuzzHTMLToText checks that any input converts without panicking to trimmed, valid UTF-8 text
// with at most one blank line in a row, and yields only absolute http(s) links.
func FuzzHTMLToText(f *testing.F) {
	for _, seed := range []string{
		testPage, linksPage, "", "<p>a</p>", "<pre>\n\n\n\nx</pre>", "<ol><li><ol><li>x",
		"<table><td>a<td>b<tr><td>c", "\xff<p>\xfe</p>", "<svg><title>t</title><p>x", "<base href=//x/><a href=y>",
		"<h1><li>x</h1>", "<!-- <p> -->", "<pre>  </pre>", "<select><option>a<option>b</select>",
	} {
		f.Add(seed)
	}
	page, _ := url.Parse("http://example.org/dir/page")
	f.Fuzz(func(t *testing.T, in string) {
		doc, err := html.Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		out := htmlToText(doc)
		if !utf8.ValidString(out) {
			t.Errorf("htmlToText(%q): got invalid UTF-8 %q", in, out)
		}
		if out != strings.TrimSpace(out) {
			t.Errorf("htmlToText(%q): got %q, want no surrounding whitespace", in, out)
		}
		if strings.Contains(out, "\n\n\n") {
			t.Errorf("htmlToText(%q): got %q, want at most one blank line in a row", in, out)
		}
		if title := htmlTitle(doc); !utf8.ValidString(title) || strings.Contains(title, "\n") {
			t.Errorf("htmlTitle(%q): got %q, want one line of valid UTF-8", in, title)
		}
		for _, l := range pageLinks(doc, page) {
			u, err := url.Parse(l.URL)
			if err != nil || !isHTTP(u) || u.Fragment != "" {
				t.Errorf("pageLinks(%q): got link %q, want an absolute http(s) URL without fragment", in, l.URL)
			}
		}
	})
}

func BenchmarkHTMLToText(b *testing.B) {
	page := strings.Repeat(testPage, 200)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			b.Fatal(err)
		}
		htmlToText(doc)
	}
}
