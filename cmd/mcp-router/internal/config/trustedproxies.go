package config

import (
	"net/netip"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// trustedProxy is an entry of http.trusted_proxies: an address or a CIDR block, checked as it is
// decoded so that an error names its line.
type trustedProxy netip.Prefix

// UnmarshalYAML parses an address or a CIDR block.
func (p *trustedProxy) UnmarshalYAML(n *yaml.Node) error {
	v, err := frontdoor.ParseTrustedProxy(n.Value)
	if err != nil {
		return err
	}
	*p = trustedProxy(v)
	return nil
}

// trustedProxies are the entries as the front door takes them.
func (r rawHTTP) trustedProxies() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range r.TrustedProxies {
		out = append(out, netip.Prefix(p))
	}
	return out
}
