package builtin

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// hidden elements hold content a reader of the page does not see as text.
var hidden = map[atom.Atom]bool{
	atom.Head: true, atom.Script: true, atom.Style: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Iframe: true, atom.Canvas: true,
}

// breaks gives the newlines that block elements put around their content: 2 leaves a blank line (a
// paragraph break), 1 starts a new line. Other elements are inline.
var breaks = map[atom.Atom]int{
	atom.P: 2, atom.H1: 2, atom.H2: 2, atom.H3: 2, atom.H4: 2, atom.H5: 2, atom.H6: 2,
	atom.Pre: 2, atom.Blockquote: 2, atom.Hr: 2, atom.Table: 2, atom.Figure: 2,
	atom.Section: 2, atom.Article: 2, atom.Header: 2, atom.Footer: 2, atom.Nav: 2,
	atom.Aside: 2, atom.Main: 2, atom.Form: 2, atom.Fieldset: 2, atom.Details: 2, atom.Dl: 2,
	atom.Div: 1, atom.Br: 1, atom.Li: 1, atom.Ul: 1, atom.Ol: 1, atom.Dt: 1, atom.Dd: 1,
	atom.Tr: 1, atom.Caption: 1, atom.Figcaption: 1, atom.Summary: 1, atom.Address: 1,
	atom.Legend: 1, atom.Option: 1, atom.Hgroup: 1, atom.Dialog: 1,
}

var headingLevel = map[atom.Atom]int{atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6}

// blankLines matches runs of more than one empty line.
var blankLines = regexp.MustCompile(`\n{3,}`)

// htmlToText renders a parsed HTML document as readable plain text: hidden content is dropped,
// block elements become line breaks, whitespace is collapsed (except in <pre>), link text is kept,
// headings are marked with '#' and list items with "- " or "N. ".
func htmlToText(doc *html.Node) string {
	var w textWriter
	w.walk(doc)
	out := strings.ToValidUTF8(w.b.String(), "\uFFFD")
	return strings.TrimSpace(blankLines.ReplaceAllString(out, "\n\n"))
}

// textWriter accumulates text, owing separators until the next text arrives so that no trailing
// space or newline is ever written.
type textWriter struct {
	b      strings.Builder
	breaks int    // newlines owed before the next text, 0 to 2
	space  bool   // a space is owed before the next text (when no newline is)
	sep    string // a table-cell separator owed instead of the space
	marker string // a heading or list marker to write at the start of the next text
	pre    int    // depth of <pre> elements: whitespace is kept inside them
}

func (w *textWriter) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
	case html.DocumentNode:
		w.children(n)
	case html.ElementNode:
		w.element(n)
	}
}

func (w *textWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c)
	}
}

func (w *textWriter) element(n *html.Node) {
	if hidden[n.DataAtom] {
		return
	}
	w.lineBreak(breaks[n.DataAtom])
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.marker = strings.Repeat("#", headingLevel[n.DataAtom]) + " "
	case atom.Li:
		w.marker = listMarker(n)
	case atom.Td, atom.Th:
		if w.breaks == 0 && w.b.Len() > 0 {
			w.sep = " | "
		}
	case atom.Pre:
		w.pre++
		defer func() { w.pre-- }()
	}
	w.children(n)
	w.lineBreak(breaks[n.DataAtom])
	if headingLevel[n.DataAtom] > 0 || n.DataAtom == atom.Li {
		w.marker = "" // unused when the element had no text
	}
}

// listMarker is "N. " for the Nth item of an ordered list and "- " otherwise.
func listMarker(li *html.Node) string {
	if li.Parent == nil || li.Parent.DataAtom != atom.Ol {
		return "- "
	}
	n := 1
	for s := li.PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type == html.ElementNode && s.DataAtom == atom.Li {
			n++
		}
	}
	return strconv.Itoa(n) + ". "
}

func (w *textWriter) lineBreak(n int) {
	w.breaks = max(w.breaks, n)
}

func (w *textWriter) text(s string) {
	if w.pre > 0 {
		if s != "" {
			w.flush()
			w.b.WriteString(s)
		}
		return
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		w.space = w.space || s != ""
		return
	}
	w.space = w.space || startsWithSpace(s)
	w.flush()
	w.b.WriteString(strings.Join(words, " "))
	w.space = endsWithSpace(s)
}

// flush writes what is owed before new text.
func (w *textWriter) flush() {
	switch {
	case w.b.Len() == 0:
	case w.breaks > 0:
		w.b.WriteString("\n\n"[:w.breaks])
	case w.sep != "":
		w.b.WriteString(w.sep)
	case w.space:
		w.b.WriteByte(' ')
	}
	w.b.WriteString(w.marker)
	w.breaks, w.space, w.sep, w.marker = 0, false, "", ""
}

func startsWithSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func endsWithSpace(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsSpace(r)
}

// htmlTitle is the collapsed text of the document's first <title>, or "".
func htmlTitle(doc *html.Node) string {
	t := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title && n.Namespace == "" })
	if t == nil {
		return ""
	}
	return collapse(textContent(t))
}

// find returns the first element below n in document order for which match holds, or nil.
func find(n *html.Node, match func(*html.Node) bool) *html.Node {
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && match(d) {
			return d
		}
	}
	return nil
}

// textContent is the text of n and its descendants, without hidden elements.
func textContent(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
		case n.Type == html.ElementNode && hidden[n.DataAtom] && n.DataAtom != atom.Head:
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func collapse(s string) string {
	return strings.ToValidUTF8(strings.Join(strings.Fields(s), " "), "\uFFFD")
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

type link struct {
	URL  string `json:"url"`
	Text string `json:"text"`
}

// pageLinks returns the http(s) links of <a> and <area> elements in document order, resolved
// against the page and its <base href>, deduplicated (the first keeps a later one's text if it has
// none) and without fragments.
func pageLinks(doc *html.Node, page *url.URL) []link {
	base := documentBase(doc, page)
	links := []link{}
	seen := map[string]int{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.DataAtom != atom.A && n.DataAtom != atom.Area {
			continue
		}
		l, ok := resolveLink(n, base)
		i, dup := seen[l.URL]
		switch {
		case !ok:
		case !dup:
			seen[l.URL] = len(links)
			links = append(links, l)
		case links[i].Text == "":
			links[i].Text = l.Text
		}
	}
	return links
}

// documentBase is the page URL, or the first <base href> resolved against it.
func documentBase(doc *html.Node, page *url.URL) *url.URL {
	b := find(doc, func(n *html.Node) bool {
		_, ok := attr(n, "href")
		return n.DataAtom == atom.Base && ok
	})
	if b == nil {
		return page
	}
	href, _ := attr(b, "href")
	u, err := page.Parse(strings.TrimSpace(href))
	if err != nil || !isHTTP(u) {
		return page
	}
	return u
}

func resolveLink(n *html.Node, base *url.URL) (link, bool) {
	href, ok := attr(n, "href")
	if !ok {
		return link{}, false
	}
	u, err := base.Parse(strings.TrimSpace(href))
	if err != nil || !isHTTP(u) {
		return link{}, false
	}
	u.Fragment, u.RawFragment = "", ""
	return link{URL: u.String(), Text: linkText(n)}, true
}

// linkText is what a reader sees of a link: its text, else its label or an image's alt text.
func linkText(n *html.Node) string {
	if t := collapse(textContent(n)); t != "" {
		return t
	}
	for _, key := range []string{"aria-label", "title", "alt"} {
		if v, ok := attr(n, key); ok && collapse(v) != "" {
			return collapse(v)
		}
	}
	if img := find(n, func(c *html.Node) bool { return c.DataAtom == atom.Img }); img != nil {
		alt, _ := attr(img, "alt")
		return collapse(alt)
	}
	return ""
}

func isHTTP(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
