package config

import (
	"slices"
	"testing"
)

// http.allowed_hosts are taken as written: names, IPs and host:port pairs.
func TestAllowedHostsLoad(t *testing.T) {
	cfg, err := load(t, "http:\n  allowed_hosts: [gw.example.com, 'gw:8080', 10.0.0.5, '[fd00::1]:8080']\nprofiles:\n  p: {}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"gw.example.com", "gw:8080", "10.0.0.5", "[fd00::1]:8080"}
	if !slices.Equal(cfg.HTTP.AllowedHosts, want) {
		t.Errorf("got %q, want %q", cfg.HTTP.AllowedHosts, want)
	}
}
