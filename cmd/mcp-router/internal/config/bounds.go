package config

import (
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// HTTPBounds are the bounds on each client of serve --http; zero takes the proxy's default.
type HTTPBounds struct {
	// Server is the HTTP server's timeouts: on reading a request's headers (10s), and on a keep-alive
	// connection idle (2m).
	Server frontdoor.HTTPServerOptions
	// BodyTimeout bounds the reading of one request body (30s).
	BodyTimeout time.Duration
	// MaxSessionsPerClient bounds the sessions of one token, or of one address without tokens (64).
	MaxSessionsPerClient int
	// MaxStreamsPerSession bounds one session's requests in flight (32).
	MaxStreamsPerSession int
	// MaxBodyMemory bounds the request bodies held in memory at once, in bytes (64 MiB).
	MaxBodyMemory int64
}

func (r rawHTTP) setBounds(b *HTTPBounds) {
	b.Server = frontdoor.HTTPServerOptions{HeaderTimeout: time.Duration(r.HeaderTimeout), IdleTimeout: time.Duration(r.IdleTimeout)}
	b.BodyTimeout = time.Duration(r.BodyTimeout)
	b.MaxSessionsPerClient, b.MaxStreamsPerSession = int(r.MaxSessionsPerClient), int(r.MaxStreamsPerSession)
	b.MaxBodyMemory = int64(r.MaxBodyMemory)
}

// Guard sets the guard's bounds from b.
func (b HTTPBounds) Guard(opts *frontdoor.Options) {
	opts.BodyTimeout = b.BodyTimeout
	opts.MaxBodyMemory = b.MaxBodyMemory
	opts.MaxSessionsPerClient = b.MaxSessionsPerClient
	opts.MaxStreamsPerSession = b.MaxStreamsPerSession
}

// byteSize is a number of bytes, with an optional binary unit: 1048576, 512KiB, 64MiB, 1GiB.
type byteSize int64

// UnmarshalYAML parses a size of at least 1 KiB.
func (s *byteSize) UnmarshalYAML(n *yaml.Node) error {
	v, ok := parseSize(n.Value, 3)
	if !ok || v < 1<<10 {
		return fmt.Errorf("%q is not a size of at least 1KiB (like 64MiB, 512KiB or a number of bytes)", n.Value)
	}
	*s = byteSize(v)
	return nil
}

// sizeUnits are the units a size may end in: KiB, MiB, GiB, and then KB, MB and GB as the same
// powers of 1024 (max_body_memory takes only the first three).
var sizeUnits = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}}

func parseSize(text string, units int) (int64, bool) {
	text = strings.TrimSpace(text)
	mult := int64(1)
	for _, u := range sizeUnits[:units] {
		if num, ok := strings.CutSuffix(text, u.suffix); ok {
			text, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, false
	}
	return n * mult, true
}

type positiveRate float64

// UnmarshalYAML accepts a finite number more than zero.
func (r *positiveRate) UnmarshalYAML(n *yaml.Node) error {
	var f float64
	if err := n.Decode(&f); err != nil || !(f > 0) || math.IsInf(f, 0) {
		return fmt.Errorf("%q is not a number more than zero (like 100 or 0.5)", n.Value)
	}
	*r = positiveRate(f)
	return nil
}

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

func (r rawHTTP) trustedProxies() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range r.TrustedProxies {
		out = append(out, netip.Prefix(p))
	}
	return out
}
