package routing

import (
	"slices"
	"strings"
)

// An exclusive domain is a rule of the catalog, not of scoring: a tool
// that declares its domain exclusive (the built-in manual's, mcp-router)
// is ranked only for requests that name that domain.

// namesDomain tells that the request's terms (see words) hold every term
// of domain.
func namesDomain(domain string, query []string) bool {
	terms := words.Tokens(domain)
	return len(terms) > 0 && !slices.ContainsFunc(terms, func(w string) bool { return !slices.Contains(query, w) })
}

// outOfDomain returns a test of whether a tool is exclusive to a domain
// the request does not name; the request is tokenised at the first
// exclusive tool met.
func outOfDomain(query string) func(t Tool) bool {
	var terms []string
	read := false
	return func(t Tool) bool {
		if !t.Exclusive {
			return false
		}
		if !read {
			terms, read = words.Tokens(query), true
		}
		return !namesDomain(domainOf(t), terms)
	}
}

// DomainMeta is the key of a tool's _meta under which its server
// declares the tool's domain, and whether that domain is exclusive:
// {"name": "mcp-router", "exclusive": true}.
const DomainMeta = "io.github.mcp-router/domain"

// DeclaredDomain reads the domain a tool's _meta fields declare under
// DomainMeta; "" when none.
func DeclaredDomain(meta map[string]any) (name string, exclusive bool) {
	m, _ := meta[DomainMeta].(map[string]any)
	name, _ = m["name"].(string)
	exclusive, _ = m["exclusive"].(bool)
	return strings.TrimSpace(name), exclusive && strings.TrimSpace(name) != ""
}
