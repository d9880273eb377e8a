package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/integrity"
)

const testdata = "testdata/import"

// importFiles imports files of client and loads the result as a
// configuration, with vars as the environment.
func importFiles(t *testing.T, opts ImportOptions, vars map[string]string) (*Imported, *Config) {
	t.Helper()
	if opts.Places.Home == "" {
		opts.Places = Places{Home: "/home/ada", ConfigDir: "/home/ada/.config", Dir: t.TempDir()}
	}
	res, err := Import(opts)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	cfg, err := load(t, string(res.YAML), vars)
	if err != nil {
		t.Fatalf("the imported profiles.yaml does not load: %v\n%s", err, res.YAML)
	}
	return res, cfg
}

// rawUpstreams is the default profile's upstreams as written, disabled
// ones included.
func rawUpstreams(t *testing.T, cfg *Config) map[string]rawUpstream {
	t.Helper()
	out := map[string]rawUpstream{}
	for _, u := range cfg.profiles["default"].Value.Upstreams {
		out[u.Key] = u.Value
	}
	return out
}

func byName(p Profile) map[string]proxy.UpstreamConfig {
	out := map[string]proxy.UpstreamConfig{}
	for _, u := range p.Upstreams {
		out[u.Name] = u
	}
	return out
}

func hasNote(notes []string, parts ...string) bool {
	for _, n := range notes {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(n, p)
		}
		if all {
			return true
		}
	}
	return false
}

func TestImportKeepsEveryClaudeDesktopField(t *testing.T) {
	res, cfg := importFiles(t, ImportOptions{Client: ClientClaudeDesktop, Files: []string{testdata + "/claude_desktop_config.json"}}, nil)
	raw := rawUpstreams(t, cfg)
	sqlite, ok := raw["sqlite"]
	if !ok || sqlite.Enabled == nil || *sqlite.Enabled || sqlite.Cwd != "/Users/ada/projects/db" {
		t.Errorf("sqlite (disabled, with cwd): got %+v, want enabled: false and its cwd", sqlite)
	}
	if _, ok := raw["mcp-router"]; ok {
		t.Error("the mcp-router entry was imported; want it left out")
	}
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	ups := byName(p)
	if _, ok := ups["sqlite"]; ok {
		t.Error("the disabled sqlite server runs")
	}
	want := map[string]proxy.UpstreamConfig{
		"linear": {Transport: proxy.TransportSSE, URL: "https://mcp.linear.app/sse"},
		"notion": {Transport: proxy.TransportStreamableHTTP, URL: "https://mcp.notion.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer ntn_FAKE4821example9Qz7Lw3Rk5Tm1Vb8Xc2"}},
		"weather": {Transport: proxy.TransportStdio, Command: "node", Args: []string{"/Users/ada/weather/build/index.js"},
			Env: map[string]string{"OPENWEATHER_API_KEY": "3f2b8c9d1e0a4b5c6d7e8f9a0b1c2d3e", "UNITS": "metric", "PORT": "8080", "PRICE_TEMPLATE": "${price} USD"}},
		"Brave-Search": {Transport: proxy.TransportStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-brave-search"},
			Env: map[string]string{"BRAVE_API_KEY": "BSAfake7Hq2Lm9Xv4Tr6Np1Wz8Kc3Jd5"}},
	}
	for name, w := range want {
		got := ups[name]
		got = proxy.UpstreamConfig{Transport: got.Transport, URL: got.URL, Headers: got.Headers, Command: got.Command, Args: got.Args, Env: got.Env}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("upstream %s (-want +got):\n%s", name, diff)
		}
	}
	text := string(res.YAML)
	for _, w := range []string{"transport: sse # inferred: the URL path ends in /sse", "enabled: false # \"disabled\": true in the client", `"Brave Search" in the client`} {
		if !strings.Contains(text, w) {
			t.Errorf("the YAML lacks %q:\n%s", w, text)
		}
	}
	if !hasNote(res.Notes, "mcpServers.weather", `"autoApprove", "timeout"`) {
		t.Errorf("no note names the unknown fields of weather: %q", res.Notes)
	}
	if !hasNote(res.Notes, "mcpServers.mcp-router", "runs mcp-router itself") {
		t.Errorf("no note says the mcp-router entry was left out: %q", res.Notes)
	}
}

func TestImportTransport(t *testing.T) {
	tests := []struct {
		typ, url, want string
	}{
		{"", "https://mcp.linear.app/sse", "sse"},
		{"", "https://h/sse/", "sse"},
		{"", "https://h/sse?session=1", "sse"},
		{"", "https://h/mcp", "streamable-http"},
		{"", "https://h/ssen", "streamable-http"},
		{"sse", "https://h/events", "sse"},
		{"http", "https://h/sse", "streamable-http"},
		{"streamable-http", "https://h/mcp", "streamable-http"},
	}
	for _, tt := range tests {
		got, why, err := transportOf(tt.typ, tt.url)
		if err != nil || got != tt.want || why == "" {
			t.Errorf("transportOf(%q, %q) = %q (%q), %v; want %q and a reason", tt.typ, tt.url, got, why, err, tt.want)
		}
	}
	if _, _, err := transportOf("ws", "wss://h/"); err == nil || !strings.Contains(err.Error(), `"ws"`) {
		t.Errorf("type ws: got %v, want an error naming it", err)
	}
}

func TestImportClaudeCodeReadsProjectAndUserFiles(t *testing.T) {
	vars := map[string]string{"DATABASE_URL": "postgresql://db/prod", "API_KEY": "k"}
	res, cfg := importFiles(t, ImportOptions{Client: ClientClaudeCode,
		Files: []string{testdata + "/claude-code-project/.mcp.json", testdata + "/claude.json"}}, vars)
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	ups := byName(p)
	var names []string
	for _, u := range p.Upstreams {
		names = append(names, u.Name)
	}
	if diff := cmp.Diff([]string{"api", "postgres", "sentry", "github", "memory", "postgres-2"}, names); diff != "" {
		t.Errorf("upstreams (-want +got):\n%s", diff)
	}
	// Claude Code's own ${VAR} and ${VAR:-default} are the same in profiles.yaml.
	if got := ups["postgres"].Args[2]; got != "postgresql://db/prod" {
		t.Errorf("postgres's ${DATABASE_URL}: got %q", got)
	}
	if got := ups["api"]; got.URL != "https://api.example.com/mcp/events" || got.Transport != proxy.TransportSSE || got.Headers["Authorization"] != "Bearer k" {
		t.Errorf("api: got %s %s %v", got.URL, got.Transport, got.Headers)
	}
	if ups["sentry"].Transport != proxy.TransportStreamableHTTP || ups["github"].Transport != proxy.TransportStreamableHTTP {
		t.Errorf("type http: got %s and %s, want streamable-http", ups["sentry"].Transport, ups["github"].Transport)
	}
	if got := ups["postgres-2"].Args[2]; got != "postgresql://localhost/app" {
		t.Errorf("the project's postgres: got %q", got)
	}
	if !hasNote(res.Notes, `projects["/home/ada/app"].mcpServers.postgres`, `imported as "postgres-2"`) {
		t.Errorf("no note explains the rename: %q", res.Notes)
	}
	if !hasNote(res.Notes, `projects["/home/ada/site"].mcpServers.memory`, "imported once") {
		t.Errorf("no note says the repeated memory server was taken once: %q", res.Notes)
	}
}

func TestImportCursorResolvesItsVariables(t *testing.T) {
	ws, err := filepath.Abs(testdata + "/cursor-project")
	if err != nil {
		t.Fatal(err)
	}
	res, cfg := importFiles(t, ImportOptions{Client: ClientCursor,
		Files:  []string{testdata + "/cursor-project/.cursor/mcp.json", testdata + "/cursor-home/.cursor/mcp.json"},
		Places: Places{Home: "/home/ada", ConfigDir: "/home/ada/.config", Dir: ws}}, map[string]string{"API_TOKEN": "t"})
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	local := byName(p)["local-tools"]
	want := proxy.UpstreamConfig{Command: "/home/ada/bin/local-mcp", Args: []string{"--root", ws, "--name", "cursor-project"},
		Env: map[string]string{"API_TOKEN": "t", "LOG_LEVEL": "debug", "SERVICE_URL": "http://localhost:9000"}}
	got := proxy.UpstreamConfig{Command: local.Command, Args: local.Args, Env: local.Env}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("local-tools (-want +got); the entry's env wins over its envFile:\n%s", diff)
	}
	if !hasNote(res.Notes, "mcpServers.figma", "imported once") {
		t.Errorf("figma, in both files: %q", res.Notes)
	}
	if len(p.Upstreams) != 6 {
		t.Errorf("got %d upstreams, want 6", len(p.Upstreams))
	}
}

func TestImportVSCodeReadsJSONCAndInputs(t *testing.T) {
	ws, _ := filepath.Abs(testdata + "/vscode-project")
	res, cfg := importFiles(t, ImportOptions{Client: ClientVSCode, Files: []string{testdata + "/vscode-project/.vscode/mcp.json"}},
		map[string]string{"PERPLEXITY_KEY": "pk", "LEGACY_X_API_KEY": "x"})
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	ups := byName(p)
	if diff := cmp.Diff(map[string]string{"PERPLEXITY_API_KEY": "pk", "PERPLEXITY_MODEL": "sonar"}, ups["Perplexity"].Env); diff != "" {
		t.Errorf("Perplexity env, ${input:perplexity-key} as ${PERPLEXITY_KEY} plus its envFile (-want +got):\n%s", diff)
	}
	if got := ups["playwright"].Args[2]; got != filepath.Join(ws, "out") {
		t.Errorf("${workspaceFolder}/out: got %q", got)
	}
	if ups["legacy"].Transport != proxy.TransportSSE || ups["github"].Transport != proxy.TransportStreamableHTTP || ups["fetch"].Command != "uvx" {
		t.Errorf("types: legacy %s, github %s, fetch %q", ups["legacy"].Transport, ups["github"].Transport, ups["fetch"].Command)
	}
	if !hasNote(res.Notes, "servers.Perplexity.env.PERPLEXITY_API_KEY", "${input:perplexity-key}", "PERPLEXITY_KEY") {
		t.Errorf("no note about the input placeholder: %q", res.Notes)
	}
	if !hasNote(res.Notes, "servers.playwright", `"dev"`) {
		t.Errorf("no note about the unknown dev field: %q", res.Notes)
	}
}

// Secrets are listed by where they are, never by value, and --env-refs
// writes references that load back to the same values.
func TestImportListsSecretsAndWritesReferences(t *testing.T) {
	secrets := map[string]string{
		"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_FAKE0example0TOKEN0for0tests0only0000",
		"OPENWEATHER_API_KEY":          "3f2b8c9d1e0a4b5c6d7e8f9a0b1c2d3e",
		"BRAVE_API_KEY":                "BSAfake7Hq2Lm9Xv4Tr6Np1Wz8Kc3Jd5",
		"NOTION_TOKEN":                 "ntn_FAKE4821example9Qz7Lw3Rk5Tm1Vb8Xc2",
	}
	opts := ImportOptions{Client: ClientClaudeDesktop, Files: []string{testdata + "/claude_desktop_config.json"}}
	plain, _ := importFiles(t, opts, nil)
	opts.EnvRefs = true
	refs, cfg := importFiles(t, opts, secrets)
	for _, res := range []*Imported{plain, refs} {
		for _, where := range []string{"github.env.GITHUB_PERSONAL_ACCESS_TOKEN", "weather.env.OPENWEATHER_API_KEY", "Brave-Search.env.BRAVE_API_KEY"} {
			v := where[strings.LastIndex(where, ".")+1:]
			if !hasNote(res.Notes, where+" looks like a secret", "${"+v+"}") {
				t.Errorf("EnvRefs %v: no note for %s with ${%s}: %q", res == refs, where, v, res.Notes)
			}
		}
		if !hasNote(res.Notes, "notion.headers.Authorization looks like a secret", "Bearer ${NOTION_TOKEN}") {
			t.Errorf("no note for notion's Authorization header: %q", res.Notes)
		}
		for _, n := range res.Notes {
			for _, s := range secrets {
				if strings.Contains(n, s) {
					t.Errorf("a note shows a secret: %q", n)
				}
			}
		}
		if hasNote(res.Notes, "UNITS") || hasNote(res.Notes, "PORT") {
			t.Errorf("a plain setting is called a secret: %q", res.Notes)
		}
	}
	for _, s := range secrets {
		if strings.Contains(string(refs.YAML), s) {
			t.Errorf("with EnvRefs the YAML still holds a secret:\n%s", refs.YAML)
		}
		if !strings.Contains(string(plain.YAML), s) {
			t.Errorf("without EnvRefs a value is missing:\n%s", plain.YAML)
		}
	}
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	ups := byName(p)
	if ups["github"].Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != secrets["GITHUB_PERSONAL_ACCESS_TOKEN"] ||
		ups["notion"].Headers["Authorization"] != "Bearer "+secrets["NOTION_TOKEN"] {
		t.Errorf("the references do not load back to the values: %v %v", ups["github"].Env, ups["notion"].Headers)
	}
}

// Secrets in arguments and URLs are found too, and their references
// load back to the same command line and URL.
func TestImportFindsSecretsInArgsAndURLs(t *testing.T) {
	const (
		token   = "sbp_FAKE0e4f6a8b2c9d1e3f5a7b9c0d2e4f6a8b0c1d"
		pathKey = "sk-ak-FAKE9Xq2Lm7Tv4Rb8Nc1Wd5Ke3Hj6Pz0"
		query   = "FAKEq8Wm2Lx7Rv4Tb9Nc1Kd6"
	)
	vars := map[string]string{"SUPABASE_ACCESS_TOKEN": token, "ZAPIER_URL_KEY": pathKey, "ZAPIER_API_KEY": query, "CONTEXT7_API_KEY": "c"}
	res, cfg := importFiles(t, ImportOptions{Client: ClientCursor, Files: []string{testdata + "/cursor-home/.cursor/mcp.json"}, EnvRefs: true}, vars)
	for _, w := range [][]string{
		{"supabase.args[5] looks like a secret", "${SUPABASE_ACCESS_TOKEN}"},
		{"zapier.url (path) looks like a secret", "openai_api_key", "${ZAPIER_URL_KEY}"},
		{"zapier.url (api_key) looks like a secret", "api_key=${ZAPIER_API_KEY}"},
	} {
		if !hasNote(res.Notes, w...) {
			t.Errorf("no note with %q: %q", w, res.Notes)
		}
	}
	for _, secret := range []string{token, pathKey, query} {
		if strings.Contains(string(res.YAML), secret) || hasNote(res.Notes, secret) {
			t.Errorf("the secret %q is still in the output", secret)
		}
	}
	if hasNote(res.Notes, "--project-ref") || hasNote(res.Notes, "args[2]") {
		t.Errorf("a plain argument is called a secret: %q", res.Notes)
	}
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	ups := byName(p)
	if got := ups["supabase"].Args; got[5] != token || got[3] != "--project-ref=abcdefghijklmnop" {
		t.Errorf("supabase args: got %q", got)
	}
	if got, want := ups["zapier"].URL, "https://actions.zapier.com/mcp/"+pathKey+"/sse?api_key="+query+"&mode=full"; got != want {
		t.Errorf("zapier url: got %q, want %q", got, want)
	}
}

func TestSecretReason(t *testing.T) {
	tests := []struct {
		key, value string
		secret     bool
	}{
		{"GITHUB_TOKEN", "ghp_FAKE0example0TOKEN0for0tests0only0000", true},
		{"SOMETHING", "ghp_FAKE0example0TOKEN0for0tests0only0000", true}, // by shape
		{"CONFIG", "AKIAIOSFODNN7EXAMPLE", true},
		{"OPENAI", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", true},
		{"SLACK_BOT", "xoxb-123456789012-abcdefghij", true},
		{"DB_PASSWORD", "hunter2", true},
		{"X-Api-Key", "abc", true},
		{"apiKey", "abcdef", true},
		{"Authorization", "Bearer zzz", true},
		{"CACHE", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA9xQ", true}, // random-looking
		{"API_KEY", "${API_KEY}", false},
		{"AUTH_URL", "https://auth.example.com/oauth", false},
		{"SSH_KEY_PATH", "/home/ada/.ssh/id_ed25519", false},
		{"USE_AUTH", "true", false},
		{"MONKEY", "banana", false},
		{"AUTH_TYPE", "oauth", false},
		{"PRIMARY_KEY", "id", false},
		{"DB_PASSWORD", "postgres", true},
		{"LICENSE_KEY", "XK42-99QZ", true},
		{"UNITS", "metric", false},
		{"NOTION_PAGE_ID", "123e4567-e89b-12d3-a456-426614174000", false},
		{"ROOT", "/Users/ada/Documents/projects/research", false},
		{"MODEL", "claude-sonnet-4-5-20250929", false},
		{"SLUG", "my-project-name-2026-release", false},
		{"CACHE", "d41d8cd98f00b204e9800998ecf8427e", true}, // 32 hex digits
	}
	for _, tt := range tests {
		if got := integrity.SecretReason(tt.key, tt.value) != ""; got != tt.secret {
			t.Errorf("integrity.SecretReason(%q, %q) = %q, want secret %v", tt.key, tt.value, integrity.SecretReason(tt.key, tt.value), tt.secret)
		}
	}
}

func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name, client, content string
		want                  []string
	}{
		{"not json", ClientClaudeDesktop, `{"mcpServers": `, []string{"a.json", "not a JSON object"}},
		{"no servers key", ClientClaudeDesktop, `{"globalShortcut": ""}`, []string{"a.json", "no mcpServers key"}},
		{"vscode wants servers", ClientVSCode, `{"mcpServers": {"a": {"command": "x"}}}`, []string{"a.json", "no servers key"}},
		{"empty", ClientCursor, `{"mcpServers": {}}`, []string{"no MCP servers to import"}},
		{"args not a list", ClientClaudeDesktop, `{"mcpServers": {"fs": {"command": "npx", "args": "-y"}}}`, []string{"a.json", "mcpServers.fs.args", "list of strings"}},
		{"env not strings", ClientClaudeDesktop, `{"mcpServers": {"fs": {"command": "npx", "env": {"A": ["x"]}}}}`, []string{"mcpServers.fs.env.A", "a string"}},
		{"command not a string", ClientClaudeDesktop, `{"mcpServers": {"fs": {"command": 1}}}`, []string{"a.json: mcpServers.fs.command: want a string"}},
		{"env not an object", ClientClaudeDesktop, `{"mcpServers": {"fs": {"command": "npx", "env": "A=1"}}}`, []string{"mcpServers.fs.env: want an object of names to strings"}},
		{"disabled not a bool", ClientClaudeDesktop, `{"mcpServers": {"fs": {"command": "npx", "disabled": "yes"}}}`, []string{"mcpServers.fs.disabled", "true or false"}},
		{"neither command nor url", ClientClaudeDesktop, `{"mcpServers": {"fs": {"args": ["x"]}}}`, []string{"a.json", "mcpServers.fs", "neither command nor url"}},
		{"both", ClientCursor, `{"mcpServers": {"fs": {"command": "x", "url": "https://h/mcp"}}}`, []string{"mcpServers.fs", "both command and url"}},
		{"websocket", ClientClaudeCode, `{"mcpServers": {"w": {"type": "ws", "url": "wss://h/"}}}`, []string{"mcpServers.w", `"ws"`}},
		{"entry not an object", ClientClaudeCode, `{"mcpServers": {"w": "npx"}}`, []string{"mcpServers.w", "want an object"}},
		{"projects of the wrong shape", ClientClaudeCode, `{"projects": []}`, []string{"a.json", "projects"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write("a.json", tt.content)
			_, err := Import(ImportOptions{Client: tt.client, Files: []string{path}, Places: Places{Home: dir, ConfigDir: dir, Dir: dir}})
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v, want an error containing %q", err, w)
				}
			}
		})
	}
	big := write("big.json", `{"mcpServers": {}, "pad": "`+strings.Repeat("x", MaxClientFile)+`"}`)
	if _, err := Import(ImportOptions{Client: ClientClaudeCode, Files: []string{big}}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file over the bound: got %v", err)
	}
	if _, err := Import(ImportOptions{Client: "zed"}); err == nil || !strings.Contains(err.Error(), "claude-desktop") {
		t.Errorf("unknown client: got %v, want the list of clients", err)
	}
	_, err := Import(ImportOptions{Client: ClientCursor, Places: Places{Home: dir, ConfigDir: dir, Dir: dir}})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ".cursor", "mcp.json")) {
		t.Errorf("no file in the default places: got %v, want the places named", err)
	}
}

func TestImportDefaultPlaces(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	for path, content := range map[string]string{
		filepath.Join(project, ".mcp.json"): `{"mcpServers": {"a": {"command": "a"}}}`,
		filepath.Join(home, ".claude.json"): `{"numStartups": 1, "projects": {"/p": {"mcpServers": {"b": {"type": "http", "url": "https://b/mcp"}}}}}`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, cfg := importFiles(t, ImportOptions{Client: ClientClaudeCode, Places: Places{Home: home, ConfigDir: filepath.Join(home, ".config"), Dir: project}}, nil)
	if len(res.Files) != 2 || len(rawUpstreams(t, cfg)) != 2 {
		t.Errorf("read %v, got upstreams %v; want both files and both servers", res.Files, rawUpstreams(t, cfg))
	}
}

// FuzzImport: whatever a client file holds, Import returns an error or a
// profiles.yaml that loads. The seeds are small, so that the fuzzer's
// minimizing stays quick.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "${HOME}"], "env": {"GITHUB_TOKEN": "ghp_FAKE0example0TOKEN0for0tests0only0000"}, "cwd": "/tmp", "disabled": true}}}`))
	f.Add([]byte(`{"mcpServers": {"a b/c": {"url": "https://h/sse?api_key=k1", "headers": {"Authorization": "Bearer ${x"}}}}`))
	f.Add([]byte(`{"projects": {"/p": {"mcpServers": {"r": {"type": "http", "url": "https://h/mcp"}}, "disabledMcpjsonServers": ["r"]}}}`))
	f.Add([]byte("{\n // c\n \"mcpServers\": {\"x\": {\"type\": \"stdio\", \"command\": \"${env:A}\",},},}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "c.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, client := range Clients {
			res, err := Import(ImportOptions{Client: client, Files: []string{path}, Places: Places{Home: dir, ConfigDir: dir, Dir: dir}})
			if err != nil {
				continue
			}
			if _, err := Load(LoadOptions{Default: res.YAML, Getenv: func(string) (string, bool) { return "", false }}); err != nil {
				t.Fatalf("%s: the import of %q does not load: %v\n%s", client, data, err, res.YAML)
			}
		}
	})
}

// Moved counts a client server as moved only when the profile has an
// upstream of its imported name with the same command or url, and only
// in the file's top-level server map.
func TestMovedNeedsTheSameServer(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".claude.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers": {
		"same": {"type": "stdio", "command": "npx", "args": ["a"]},
		"args differ": {"type": "stdio", "command": "npx", "args": ["a"]},
		"other command": {"type": "stdio", "command": "uvx"},
		"remote": {"type": "http", "url": "https://h/mcp"},
		"absent": {"type": "stdio", "command": "x"}},
		"projects": {"/p": {"mcpServers": {"in-project": {"type": "stdio", "command": "npx"}}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := load(t, `profiles:
  default:
    upstreams:
      same: {command: npx, args: [a]}
      args-differ: {command: npx, args: [b]}
      other-command: {command: pipx}
      remote: {url: "https://h/mcp", transport: sse}
      in-project: {command: npx}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	moved, err := cfg.Moved("", ClientClaudeCode, file, Places{Home: dir, ConfigDir: dir, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// "args differ" is, in every part, the server the profile runs as
	// "same"; a project's servers count too.
	want := []MovedServer{{Name: "args differ"}, {Name: "remote"}, {Name: "same"}, {Name: "in-project", Project: "/p"}}
	if diff := cmp.Diff(want, moved); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	if _, err := cfg.Moved("nope", ClientClaudeCode, file, Places{}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("an unknown profile: got %v", err)
	}
}

// A project server the user turned down in Claude Code stays off.
func TestImportClaudeCodeKeepsTurnedDownProjectServers(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	mcpJSON := filepath.Join(project, ".mcp.json")
	claudeJSON := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(mcpJSON, []byte(`{"mcpServers": {"wanted": {"command": "a"}, "declined": {"command": "b"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := `{"projects": {` + strconv.Quote(project) + `: {"mcpServers": {}, "enabledMcpjsonServers": ["wanted"], "disabledMcpjsonServers": ["declined"]}}}`
	if err := os.WriteFile(claudeJSON, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	res, cfg := importFiles(t, ImportOptions{Client: ClientClaudeCode, Files: []string{mcpJSON, claudeJSON}}, nil)
	raw := rawUpstreams(t, cfg)
	if e := raw["declined"].Enabled; e == nil || *e {
		t.Errorf("declined: enabled %v, want false\n%s", e, res.YAML)
	}
	if e := raw["wanted"].Enabled; e != nil {
		t.Errorf("wanted: enabled %v, want it on", *e)
	}
	if !strings.Contains(string(res.YAML), "disabledMcpjsonServers") {
		t.Errorf("no comment says why declined is off:\n%s", res.YAML)
	}
}

// Claude Desktop does not expand ${VAR}: its server got the text itself.
// The import keeps that text ($${VAR}) and says so, with what to write to
// read the variable instead, rather than change its meaning in silence.
func TestImportNotesClaudeDesktopsLiteralVariable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"brave": {"command": "npx", "args": ["-y", "brave"], "env": {"BRAVE_API_KEY": "${BRAVE_API_KEY}"}},
		"mcp-router": {"command": "/usr/local/bin/mcp-router", "args": ["serve"], "env": {"BRAVE_API_KEY": "${BRAVE_API_KEY}"}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res, _ := importFiles(t, ImportOptions{Client: ClientClaudeDesktop, Files: []string{file}}, nil)
	if !strings.Contains(string(res.YAML), "$${BRAVE_API_KEY}") {
		t.Errorf("the literal text is not kept:\n%s", res.YAML)
	}
	if !hasNote(res.Notes, "mcpServers.brave.env.BRAVE_API_KEY", "as this very text", "write ${BRAVE_API_KEY} in profiles.yaml") {
		t.Errorf("no note says Claude Desktop passed ${BRAVE_API_KEY} as text: %q", res.Notes)
	}
	if hasNote(res.Notes, "mcpServers.mcp-router.env") {
		t.Errorf("a note about the fields of the mcp-router entry, which is left out: %q", res.Notes)
	}
}
