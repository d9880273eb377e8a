package config

import "testing"

// BenchmarkLoad loads a small configuration from memory, with one MCP_ROUTER_* override, and
// resolves its profile: what every command pays before it starts.
func BenchmarkLoad(b *testing.B) {
	data := []byte("log: {level: info}\nprofiles:\n  p:\n    upstreams:\n      calc: {builtin: calculator}\n" +
		"      fs: {command: npx, args: [-y, server-fs, /tmp], env: {TOKEN: \"${TOKEN:-x}\"}}\n" +
		"      remote: {url: \"https://example.com/mcp\", headers: {Authorization: \"Bearer ${T:-t}\"}}\n")
	getenv := env(map[string]string{"MCP_ROUTER_LOG_WIRE": "true"})
	for b.Loop() {
		cfg, err := Load(LoadOptions{Default: data, Getenv: getenv, Builtins: builtins})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cfg.Profile(""); err != nil {
			b.Fatal(err)
		}
	}
}
