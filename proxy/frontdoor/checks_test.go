package frontdoor

import "testing"

func TestChecks(t *testing.T) {
	d := NewChecks(Options{BearerTokens: []string{"tok-1", " "}, AllowedHosts: []string{"gw.example"},
		AllowedOrigins: []string{"https://app.example"}})
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"loopback host", d.HostAllowed("127.0.0.1:8080"), true},
		{"allowed host", d.HostAllowed("gw.example:443"), true},
		{"rebinding host", d.HostAllowed("evil.example"), false},
		{"loopback origin", d.OriginAllowed("http://localhost:3000"), true},
		{"allowed origin", d.OriginAllowed("https://app.example"), true},
		{"foreign origin", d.OriginAllowed("https://evil.example"), false},
		{"null origin", d.OriginAllowed("null"), false},
		{"tokens required", d.TokensRequired(), true},
		{"the token", valid(d, "tok-1"), true},
		{"another token", valid(d, "tok-2"), false},
		{"empty token", valid(d, ""), false},
		{"no tokens configured", NewChecks(Options{}).TokensRequired(), false},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// valid reports whether token is one of d's configured tokens.
func valid(d *Checks, token string) bool {
	_, ok := d.TokenCaller(token)
	return ok
}
