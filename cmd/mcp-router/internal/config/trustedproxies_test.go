package config

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// http.trusted_proxies takes addresses and CIDR blocks; a bad entry is an
// error naming its file, line and key. Unset, it trusts no one.
func TestTrustedProxiesConfig(t *testing.T) {
	def, err := load(t, "profiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.HTTP.TrustedProxies != nil {
		t.Errorf("unset: got %v, want none", def.HTTP.TrustedProxies)
	}
	set, err := load(t, "http:\n  trusted_proxies: [10.0.0.5, 172.16.0.0/12, 'fd00::/8']\nprofiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32"), netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("fd00::/8")}
	if !slices.Equal(set.HTTP.TrustedProxies, want) {
		t.Errorf("got %v, want %v", set.HTTP.TrustedProxies, want)
	}
	for _, b := range []struct{ yaml, want string }{
		{"http:\n  trusted_proxies:\n    - 10.0.0.5\n    - nginx\n", `profiles.yaml:4: http.trusted_proxies[1]: "nginx" is not an IP address or CIDR block`},
		{"http: {trusted_proxies: [10.0.0.0/33]}\n", `profiles.yaml:1: http.trusted_proxies[0]: "10.0.0.0/33" is not a CIDR block`},
		{"http: {trusted_proxies: 10.0.0.5}\n", "profiles.yaml:1: http.trusted_proxies: want a list"},
	} {
		_, err := load(t, b.yaml+"profiles:\n  p: {}\n", nil)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want an error containing %q", b.yaml, err, b.want)
		}
	}
}
