package builtin

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The guard keeps the web server off non-public destinations (SSRF) unless it runs with
// --allow-private. It checks the address a connection goes to, not the URL: it resolves a host
// itself and dials only the addresses it checked, so DNS rebinding gains nothing, and every
// redirect hop dials through it.

type resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var _ resolver = (*net.Resolver)(nil)

// guard dials public addresses only.
type guard struct {
	resolver resolver
	// dial connects to an IP address and port; its Control checks each socket's address again just
	// before connect.
	dial  func(ctx context.Context, network, address string) (net.Conn, error)
	allow func(netip.AddrPort) bool // webOptions.allowAddr
}

func newGuard(r resolver, allow func(netip.AddrPort) bool) *guard {
	g := &guard{resolver: r, allow: allow}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	g.dial = d.DialContext
	return g
}

// dialContext is an http.Transport DialContext: it resolves the host once, refuses the connection
// if any address is not public, and dials those same addresses in turn.
func (g *guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("invalid port in %q", address)
	}
	name, addrs, err := g.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	targets := make([]netip.AddrPort, len(addrs))
	for i, a := range addrs {
		targets[i] = netip.AddrPortFrom(a, uint16(port))
		if err := g.check(name, targets[i]); err != nil {
			return nil, err
		}
	}
	var first error
	for _, t := range targets {
		c, err := g.dial(ctx, network, t.String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// resolve returns the addresses of host (unmapped), and host itself when it is a name.
func (g *guard) resolve(ctx context.Context, network, host string) (string, []netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return "", []netip.Addr{a}, nil
	}
	if err := checkHost(host); err != nil {
		return "", nil, err // never ask a resolver: C's getaddrinfo reads 0x7f000001 as 127.0.0.1
	}
	family := "ip"
	switch network {
	case "tcp4":
		family = "ip4"
	case "tcp6":
		family = "ip6"
	}
	found, err := g.resolver.LookupNetIP(ctx, family, host)
	if err != nil {
		return "", nil, err
	}
	if len(found) == 0 {
		return "", nil, fmt.Errorf("no addresses found for %s", host)
	}
	addrs := make([]netip.Addr, len(found))
	for i, a := range found {
		addrs[i] = a.Unmap()
	}
	return host, addrs, nil
}

// check refuses ap unless it is public or allowed; name is the host that resolved to it, or "".
func (g *guard) check(name string, ap netip.AddrPort) error {
	if g.allow != nil && g.allow(ap) {
		return nil
	}
	if kind := addrKind(ap.Addr()); kind != "" {
		return &blockedError{name: name, addr: ap.Addr(), kind: kind}
	}
	return nil
}

// control is a net.Dialer Control function, run on every socket just before connect.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("checking %s address %q before connecting: %w", network, address, err)
	}
	return g.check("", ap)
}

type blockedError struct {
	name string     // the host name that resolved to addr, or empty for an address in the URL
	addr netip.Addr // the address refused
	kind string     // why addr is not public, from addrKind
}

func (e *blockedError) Error() string {
	if e.name == "" {
		return fmt.Sprintf("%s is %s", e.addr, e.kind)
	}
	return fmt.Sprintf("%s resolves to %s, %s", e.name, e.addr, e.kind)
}

var (
	metadataAddr  = netip.MustParseAddr("169.254.169.254")
	broadcastAddr = netip.MustParseAddr("255.255.255.255")
)

// reserved are the non-public ranges that netip.Addr has no method for.
var reserved = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `a "this network" address`},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT (shared) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol-assignment address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a network-benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/96"), "a deprecated IPv4-compatible address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

// addrKind says what kind of non-public address a is ("a loopback address"), or "" for a public
// one. An IPv6 address that embeds an IPv4 one (IPv4-mapped, NAT64, 6to4) is judged by that one.
func addrKind(a netip.Addr) string {
	a = a.WithZone("")
	if v4, form := embeddedIPv4(a); form != "" {
		if kind := addrKind(v4); kind != "" {
			return fmt.Sprintf("the %s form of %s, %s", form, v4, kind)
		}
		return ""
	}
	switch {
	case !a.IsValid():
		return "not a valid address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private-network address"
	case a == metadataAddr:
		return "a link-local address (cloud instance metadata)"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case a == broadcastAddr:
		return "the broadcast address"
	}
	for _, r := range reserved {
		if r.prefix.Contains(a) {
			return r.kind
		}
	}
	return ""
}

var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 returns the IPv4 address the IPv6 address a carries and the form's name, or "".
func embeddedIPv4(a netip.Addr) (netip.Addr, string) {
	b := a.As16()
	switch {
	case a.Is4In6():
		return a.Unmap(), "IPv4-mapped"
	case nat64Prefix.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "NAT64"
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "6to4"
	}
	return netip.Addr{}, ""
}

// checkHost refuses a host the URL standard reads as an IPv4 address not in dotted decimal
// ("0x7f000001", "2130706433", "0177.0.0.1", "127.1"): Go's resolver sends such forms to DNS, C's
// inet_aton and browsers read them as numbers, so none is trusted.
func checkHost(host string) error {
	if _, err := netip.ParseAddr(host); err == nil || !endsInNumber(host) {
		return nil
	}
	if a, ok := parseLegacyIPv4(host); ok {
		return fmt.Errorf("host %s is an IPv4 address in hex, octal, integer or shortened form (read as %s); only dotted decimal is accepted", host, a)
	}
	return fmt.Errorf("host %s ends in a number but is not a valid IP address", host)
}

// endsInNumber reports whether the URL standard takes host for an IPv4 address.
func endsInNumber(host string) bool {
	labels := ipv4Labels(host)
	last := labels[len(labels)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseLegacyIPv4 reads host as the URL standard's IPv4 parser does: one to four numbers, each
// decimal, octal or hex, the last filling the bytes that remain ("127.1" is 127.0.0.1).
func parseLegacyIPv4(host string) (netip.Addr, bool) {
	labels := ipv4Labels(host)
	if len(labels) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, label := range labels {
		n, ok := parseIPv4Number(label)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(labels)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// ipv4Labels splits host at its dots, ignoring one trailing dot.
func ipv4Labels(host string) []string {
	labels := strings.Split(host, ".")
	if len(labels) > 1 && labels[len(labels)-1] == "" {
		labels = labels[:len(labels)-1]
	}
	return labels
}

// parseIPv4Number reads one part of a legacy IPv4 address ("0x" alone is 0).
func parseIPv4Number(s string) (uint64, bool) {
	base := 10
	switch {
	case s == "":
		return 0, false
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(s, base, 64)
	return n, err == nil
}
