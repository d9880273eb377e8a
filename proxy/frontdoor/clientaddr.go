package frontdoor

import (
	"fmt"
	"iter"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// Bounds on the forwarding headers read.
const (
	// maxForwardedHops is how many forwarded addresses, from the right,
	// are looked at.
	maxForwardedHops = 16
	// maxForwardedEntry bounds one address of those headers, in bytes.
	maxForwardedEntry = 64
)

// ParseTrustedProxy parses an entry of Options.TrustedProxies: an
// address or a CIDR block, without a zone.
func ParseTrustedProxy(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil || p.Addr().Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR block like 10.0.0.0/8 or fd00::/8", s)
		}
		if p.Addr().Is4In6() {
			return netip.Prefix{}, fmt.Errorf("%q: write an IPv4 block as IPv4 (like 10.0.0.0/8)", s)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR block (like 10.0.0.5 or 10.0.0.0/8)", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// trusted reports whether a is one of the trusted proxies.
func (g *guard) trusted(a netip.Addr) bool {
	return slices.ContainsFunc(g.proxies, func(p netip.Prefix) bool { return p.Contains(a) })
}

// clientAddr is the address r is counted and logged under, and the peer
// it came through when that differs: the connection's peer, or from a
// trusted proxy the rightmost forwarded address not itself trusted, so a
// client cannot choose it. A malformed header leaves the last trusted hop.
func (g *guard) clientAddr(r *http.Request) (client, via string) {
	peer, ok := addrOf(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr, ""
	}
	if len(g.proxies) == 0 || !g.trusted(peer) {
		return peer.String(), ""
	}
	hop, read := peer, 0
	for a, ok := range forwardedHops(r.Header) {
		if !ok || read == maxForwardedHops {
			break
		}
		hop, read = a, read+1
		if !g.trusted(a) {
			break
		}
	}
	if hop == peer {
		return peer.String(), ""
	}
	return hop.String(), peer.String()
}

// addrOf parses host:port or a bare address, dropping any zone and
// unmapping IPv4 in IPv6.
func addrOf(s string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// forwardedHops yields the forwarded-for addresses of h from the right,
// each with whether it parsed: X-Forwarded-For, else Forwarded's for=.
// It reads no more than it yields.
func forwardedHops(h http.Header) iter.Seq2[netip.Addr, bool] {
	vals, forwarded := h.Values("X-Forwarded-For"), false
	if !slices.ContainsFunc(vals, func(v string) bool { return strings.TrimSpace(v) != "" }) {
		vals, forwarded = h.Values("Forwarded"), true
	}
	return func(yield func(netip.Addr, bool) bool) {
		for i := len(vals) - 1; i >= 0; i-- {
			for rest := vals[i]; rest != ""; {
				entry := rest
				if j := strings.LastIndexByte(rest, ','); j >= 0 {
					entry, rest = rest[j+1:], rest[:j]
				} else {
					rest = ""
				}
				if entry = strings.TrimSpace(entry); entry == "" {
					continue // "a, , b" and an empty header line hold no hop
				}
				if forwarded {
					entry = forwardedFor(entry)
				}
				if !yield(forwardedAddr(entry)) {
					return
				}
			}
		}
	}
}

// forwardedFor is the for= value of a Forwarded element (RFC 7239).
func forwardedFor(element string) string {
	for pair := range strings.SplitSeq(element, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "for") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// forwardedAddr parses one forwarded-for address, with or without a port;
// names, "unknown", obfuscated identifiers and zones do not parse.
func forwardedAddr(s string) (netip.Addr, bool) {
	if s == "" || len(s) > maxForwardedEntry || strings.Contains(s, "%") {
		return netip.Addr{}, false
	}
	return addrOf(s)
}
