package loopback

import "testing"

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost":   true,
		"127.0.0.1":   true,
		"127.9.9.9":   true,
		"::1":         true,
		"0.0.0.0":     false,
		"::":          false,
		"10.0.0.1":    false,
		"example.com": false,
		"LOCALHOST":   false,
		"[::1]":       false,
		"":            false,
	} {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}
