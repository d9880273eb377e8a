package results

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// Template is the resource template of kept results: the whole result,
// or a page with ?offset=N&length=M.
func Template() mcp.ResourceTemplate {
	return mcp.NewResourceTemplate(Scheme+"{id}{?offset,length}", "kept result",
		mcp.WithTemplateDescription("The whole of a tool result that was cut for the model, for the principal that made the call; "+
			"?offset= reads on from a byte offset, &length= bounds the page."),
		mcp.WithTemplateMIMEType("text/plain"))
}

// ReadResource answers a resources/read of a kept result for principal.
func (s *Store) ReadResource(principal, uri string) ([]mcp.ResourceContents, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	offset, err := intParam(u, "offset")
	if err != nil {
		return nil, err
	}
	length, err := intParam(u, "length")
	if err != nil {
		return nil, err
	}
	u.RawQuery = ""
	page, _, err := s.Read(principal, u.String(), offset, length)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: page}}, nil
}

// intParam is the query parameter key of u as a number, 0 when absent.
func intParam(u *url.URL, key string) (int, error) {
	v := u.Query().Get(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("reading %s: %s=%q is not a byte count", u.Redacted(), key, v)
	}
	return n, nil
}
