package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

func TestLoadUpstreamAuth(t *testing.T) {
	p := loadProfile(t, `profiles:
  default:
    upstreams:
      wiki:
        url: https://wiki.example.com/mcp
        auth:
          client_id: gw
          client_secret: ${WIKI_SECRET}
          token_endpoint_auth_method: client_secret_post
          scopes: [read, write]
          redirect_url: http://127.0.0.1:8976/callback
          per_user: true
          token_exchange:
            token_endpoint: https://idp.example.com/token
            client_id: gw
            client_secret: ${IDP_SECRET}
            audience: wiki
`, map[string]string{"WIKI_SECRET": "s1", "IDP_SECRET": "s2"})
	want := &upstreamauth.Config{ClientID: "gw", ClientSecret: "s1", AuthMethod: "client_secret_post", Scopes: []string{"read", "write"},
		RedirectURL: "http://127.0.0.1:8976/callback", PerUser: true,
		TokenExchange: &upstreamauth.TokenExchange{TokenEndpoint: "https://idp.example.com/token", ClientID: "gw", ClientSecret: "s2", Audience: "wiki"}}
	if diff := cmp.Diff(want, p.Upstreams[0].Auth); diff != "" {
		t.Errorf("auth (-want +got):\n%s", diff)
	}
}

func TestBadUpstreamAuthNamesTheKey(t *testing.T) {
	tests := []struct{ name, upstream, want string }{
		{"auth on a command", `{command: x, auth: {client_id: a}}`, "up.auth"},
		{"unknown method", `{url: "https://x/mcp", auth: {token_endpoint_auth_method: magic}}`, "up.auth.token_endpoint_auth_method"},
		{"secret without id", `{url: "https://x/mcp", auth: {client_secret: s}}`, "up.auth.client_secret"},
		{"exchange without endpoint", `{url: "https://x/mcp", auth: {token_exchange: {audience: a}}}`, "up.auth.token_exchange.token_endpoint"},
		{"redirect not loopback", `{url: "https://x/mcp", auth: {redirect_url: "http://example.com:80/cb"}}`, "up.auth.redirect_url"},
		{"unknown key", `{url: "https://x/mcp", auth: {client_idd: a}}`, "client_idd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, "profiles:\n  default:\n    upstreams:\n      up: "+tt.upstream+"\n", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "profiles.yaml") {
				t.Errorf("got %v, want an error naming the file and %s", err, tt.want)
			}
		})
	}
}
