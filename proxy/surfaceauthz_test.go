package proxy

// Every surface is authorised like the MCP endpoint: the whole-gateway
// views (/metrics, the upstreams' states in /readyz) are for the tokens
// that may see the whole gateway, and the auxiliary metrics listener of a
// stdio gateway checks Host as the main one does.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-router/mcp-router/proxy/frontdoor"
)

// getWith sends a GET to url with token (when set) and Host (when set).
func getWith(t *testing.T, url, token, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A token served one profile (http.tokens[].profile) gets 403 at /metrics
// and the counts alone at /readyz; a token of http.bearer_tokens and an
// administrative one see both in full.
func TestSurfaceAuthzMetricsAndReadyz(t *testing.T) {
	h := startHub(t, builtinFake("alpha"))
	m := NewMetrics()
	m.BreakerTrip()
	opts := frontdoor.Options{BearerTokens: []string{"wide-token"}, Profile: "main",
		Tokens: []frontdoor.Token{{Token: "other-token", Profile: "other"}, {Token: "main-token", Profile: "main"},
			{Token: "admin-token", Profile: "other", Admin: true}}}
	mux := http.NewServeMux()
	mux.Handle("/metrics", frontdoor.Guard(frontdoor.WholeGatewayOnly(m.Handler()), opts))
	mux.Handle("/readyz", HealthHandler(h, Ready, opts))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	for _, tt := range []struct {
		token string
		whole bool
	}{{"wide-token", true}, {"admin-token", true}, {"other-token", false}, {"main-token", false}} {
		code, body := getWith(t, ts.URL+"/metrics", tt.token, "")
		if tt.whole && (code != http.StatusOK || !strings.Contains(body, "mcp_router_breaker_trips_total 1")) {
			t.Errorf("/metrics with %s: got %d, want 200 with the metrics", tt.token, code)
		}
		if !tt.whole && (code != http.StatusForbidden || strings.Contains(body, "mcp_router_")) {
			t.Errorf("/metrics with %s: got %d (%.100q), want 403 without metrics", tt.token, code, body)
		}
		code, body = getWith(t, ts.URL+"/readyz", tt.token, "")
		if named := strings.Contains(body, `"name":"alpha"`); code != http.StatusOK || named != tt.whole {
			t.Errorf("/readyz with %s: got %d %s, want 200 naming the upstreams: %v", tt.token, code, body, tt.whole)
		}
	}
}

// The metrics listener of a stdio gateway (--metrics) refuses a Host that
// is not loopback, its own or an allowed one, as /mcp does.
func TestSurfaceAuthzStdioMetricsChecksHost(t *testing.T) {
	log := metricsAddrLog{addr: make(chan string, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() {
		served <- ServeMetrics(ctx, "127.0.0.1:0", NewMetrics(), []string{"metrics.example"}, slog.New(log))
	}()
	defer func() { cancel(); <-served }()
	addr := <-log.addr
	_, port, _ := strings.Cut(addr, ":")
	for host, want := range map[string]int{
		"":                        http.StatusOK, // the address itself
		"localhost:" + port:       http.StatusOK,
		"metrics.example:" + port: http.StatusOK,
		"rebound.example:" + port: http.StatusForbidden,
		"attacker.example":        http.StatusForbidden,
	} {
		if code, _ := getWith(t, "http://"+addr+"/metrics", "", host); code != want {
			t.Errorf("GET /metrics with Host %q: got %d, want %d", host, code, want)
		}
	}
}
