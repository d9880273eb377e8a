package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/internal/fakeupstream"
)

const importData = "internal/config/testdata/import"

// userDirs makes a home and a config directory for a command's
// environment, and returns that environment and where the clients' and
// mcp-router's files go in it.
func userDirs(t *testing.T) (map[string]string, config.Places) {
	t.Helper()
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "USERPROFILE": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "AppData": filepath.Join(home, "config")}
	e := &env{getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	p, err := e.places()
	if err != nil {
		t.Fatal(err)
	}
	return vars, p
}

// The profile --write makes is where the loader looks, is refused over an
// existing one without --force, and loads.
func TestImportWriteGoesWhereTheConfigIsSearched(t *testing.T) {
	vars, places := userDirs(t)
	want := filepath.Join(places.ConfigDir, "mcp-router", "profiles.yaml")
	in := filepath.Join(importData, "claude_desktop_config.json")
	out, stderr, err := runCLI(t, vars, "import", "claude-desktop", in, "--write")
	if err != nil || !strings.Contains(out, "wrote "+want) || !strings.Contains(out, "mcp-router install claude-desktop") {
		t.Fatalf("import --write: %v\n%s", err, out)
	}
	first, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(want); info.Mode().Perm() != 0o600 {
		t.Errorf("profiles.yaml mode %v, want 0600 (it may hold secrets)", info.Mode().Perm())
	}
	for _, secret := range []string{"ghp_FAKE0example0TOKEN0for0tests0only0000", "ntn_FAKE4821example9Qz7Lw3Rk5Tm1Vb8Xc2"} {
		if strings.Contains(stderr+out, secret) {
			t.Errorf("a secret reached the terminal:\n%s%s", out, stderr)
		}
	}
	if !strings.Contains(stderr, "github.env.GITHUB_PERSONAL_ACCESS_TOKEN looks like a secret") {
		t.Errorf("stderr lacks the secret list:\n%s", stderr)
	}
	cfg, err := config.Load(config.LoadOptions{SearchDirs: []string{filepath.Join(places.ConfigDir, "mcp-router")}})
	if err != nil || cfg.File != want {
		t.Fatalf("the loader does not find the written file: %v (read %v)", err, cfg)
	}

	_, _, err = runCLI(t, vars, "import", "claude-desktop", in, "--write", "--env-refs")
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("a second --write: got %v, want a refusal naming the file and --force", err)
	}
	if now, _ := os.ReadFile(want); string(now) != string(first) {
		t.Error("the refused --write changed the file")
	}
	out, _, err = runCLI(t, vars, "import", "claude-desktop", in, "--write", "--env-refs", "--force")
	if err != nil || !strings.Contains(out, "backed up") {
		t.Fatalf("--force: %v\n%s", err, out)
	}
	backups, _ := filepath.Glob(want + ".bak-*")
	if len(backups) != 1 {
		t.Fatalf("backups %v, want one", backups)
	}
	if old, _ := os.ReadFile(backups[0]); string(old) != string(first) {
		t.Error("the backup is not the old file")
	}
	if now, _ := os.ReadFile(want); strings.Contains(string(now), "ghp_FAKE0example0") || !strings.Contains(string(now), "${GITHUB_PERSONAL_ACCESS_TOKEN}") {
		t.Errorf("--env-refs --force wrote:\n%s", now)
	}
}

// Without FILE, import reads the client's project and user files.
func TestImportReadsTheDefaultLocations(t *testing.T) {
	vars, places := userDirs(t)
	project := t.TempDir()
	for path, content := range map[string]string{
		filepath.Join(places.Home, ".cursor", "mcp.json"): `{"mcpServers": {"user-server": {"command": "u"}}}`,
		filepath.Join(project, ".cursor", "mcp.json"):     `{"mcpServers": {"project-server": {"url": "http://127.0.0.1:3845/sse"}}}`,
	} {
		os.MkdirAll(filepath.Dir(path), 0o700)
		writeFile(t, filepath.Dir(path), filepath.Base(path), content)
	}
	t.Chdir(project)
	out, _, err := runCLI(t, vars, "import", "cursor")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"user-server:", "project-server:", "transport: sse"} {
		if !strings.Contains(out, w) {
			t.Errorf("import cursor lacks %q:\n%s", w, out)
		}
	}
	if _, _, err := runCLI(t, vars, "import", "vscode"); err == nil || !strings.Contains(err.Error(), filepath.Join(".vscode", "mcp.json")) {
		t.Errorf("no VS Code file anywhere: got %v, want the places looked in", err)
	}
}

// Windsurf's file is read where Windsurf keeps it: a remote server's serverUrl is its url, and
// the tools it turned off (disabledTools) stay off behind the gateway. A client import does not
// know is refused, not answered with the help and exit 0.
func TestImportReadsWindsurf(t *testing.T) {
	vars, places := userDirs(t)
	exe, fakeEnv := fakeupstream.Command("chatty")
	file := filepath.Join(places.Home, ".codeium", "windsurf", "mcp_config.json")
	os.MkdirAll(filepath.Dir(file), 0o700)
	content, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"chatty": map[string]any{"command": exe, "env": fakeEnv, "disabledTools": []string{"echo"}},
		"linear": map[string]any{"serverUrl": "https://mcp.linear.app/sse", "disabled": true},
	}})
	writeFile(t, filepath.Dir(file), filepath.Base(file), string(content))
	out, stderr, err := runCLI(t, vars, "import", "windsurf")
	if err != nil || strings.Contains(stderr, "no equivalent") {
		t.Fatalf("import windsurf: %v\n%s", err, stderr)
	}
	for _, w := range []string{"url: https://mcp.linear.app/sse", "transport: sse", "deny: [echo]"} {
		if !strings.Contains(out, w) {
			t.Errorf("import windsurf lacks %q:\n%s", w, out)
		}
	}
	cfg := writeFile(t, t.TempDir(), "profiles.yaml", out)
	table, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error")
	if err != nil || !strings.Contains(table, "chatty_") || strings.Contains(table, "chatty_echo") {
		t.Errorf("tools of the imported profile, want chatty's tools but echo: %v\n%s", err, table)
	}
	for _, args := range [][]string{{"import", "windsurff"}, {"install", "codex"}, {"import"}} {
		if _, _, err := runCLI(t, vars, args...); err == nil || !strings.Contains(err.Error(), "windsurf") {
			t.Errorf("%q: got %v, want an error naming the clients", args, err)
		}
	}
}

// A secret-looking value a VS Code envFile sets is written as a reference,
// with or without --env-refs: it was not in the client's file, and import
// writes no secret in clear that was not already there.
func TestImportReferencesTheSecretsOfAnEnvFile(t *testing.T) {
	dir := t.TempDir()
	secret := "ghp_FAKE0envfile0TOKEN0for0tests0only00"
	writeFile(t, dir, "github.env", "GITHUB_TOKEN="+secret+"\nLOG_LEVEL=debug\n")
	file := writeFile(t, dir, "mcp.json", `{"servers": {"gh": {"command": "npx", "args": ["-y", "server-github"], "envFile": "github.env"}}}`)
	out, stderr, err := runCLI(t, nil, "import", "vscode", file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out+stderr, secret) || !strings.Contains(out, "GITHUB_TOKEN: ${GITHUB_TOKEN}") || !strings.Contains(out, "LOG_LEVEL: debug") {
		t.Errorf("import vscode: want GITHUB_TOKEN as ${GITHUB_TOKEN}, LOG_LEVEL as it is, no secret:\n%s", out)
	}
	if want := "gh.env.GITHUB_TOKEN (from envFile " + filepath.Join(dir, "github.env") + ") looks like a secret"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// An imported profile runs: its stdio server starts as a child and its
// tools are in the catalog, and the server the user switched off does not
// start.
func TestImportedProfileRuns(t *testing.T) {
	exe, fakeEnv := fakeupstream.Command("chatty")
	desktop, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"chatty": map[string]any{"command": exe, "env": fakeEnv, "cwd": t.TempDir()},
		"off":    map[string]any{"command": exe, "env": map[string]string{fakeupstream.EnvVar: "off"}, "disabled": true},
	}})
	in := writeFile(t, t.TempDir(), "claude_desktop_config.json", string(desktop))
	out, _, err := runCLI(t, nil, "import", "claude-desktop", in)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, t.TempDir(), "profiles.yaml", out)
	table, _, err := runCLI(t, nil, "tools", "--config", cfg, "--log-level", "error")
	if err != nil || !strings.Contains(table, "chatty_echo") || strings.Contains(table, "off_") {
		t.Errorf("tools of the imported profile: %v\n%s", err, table)
	}
}

func TestImportAndInstallHaveHelp(t *testing.T) {
	for _, client := range config.Clients {
		for _, cmd := range []string{"import", "install"} {
			out, _, err := runCLI(t, nil, cmd, client, "--help")
			if err != nil || !strings.Contains(out, "Usage:") || !strings.Contains(out, "--force") {
				t.Errorf("%s %s --help: %v\n%s", cmd, client, err, out)
			}
		}
	}
}

// A second client's import merges into the profile: nothing of the first
// is dropped, a server both have is one upstream, a different server of
// the same name joins under another name with a note, the file's own
// comments stay, and the old file is kept.
func TestImportMergesASecondClient(t *testing.T) {
	vars, places := userDirs(t)
	path := filepath.Join(places.ConfigDir, "mcp-router", "profiles.yaml")
	if _, _, err := runCLI(t, vars, "import", "claude-desktop", filepath.Join(importData, "claude_desktop_config.json"), "--write"); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	withComment := strings.Replace(string(first), "profiles:", "# my own note\nprofiles:", 1)
	if err := os.WriteFile(path, []byte(withComment), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, vars, "import", "cursor", filepath.Join(importData, "cursor-home", ".cursor", "mcp.json"), "--write", "--merge"); err != nil {
		t.Fatal(err)
	}
	// A third client has the desktop's filesystem server as it is, and
	// another server called github.
	third := writeFile(t, t.TempDir(), "mcp.json", `{"mcpServers": {
		"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ada/Desktop", "/Users/ada/Downloads"]},
		"github": {"url": "https://api.githubcopilot.com/mcp/"}}}`)
	_, stderr, err := runCLI(t, vars, "import", "cursor", third, "--write", "--merge")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, `imported as "github-cursor"`) || !strings.Contains(stderr, "filesystem: the profile has this server already") {
		t.Errorf("the notes do not say what merged how:\n%s", stderr)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range mustProfile(t, cfg).Upstreams {
		names = append(names, u.Name)
	}
	want := []string{"Brave-Search", "browsermcp", "context7", "figma", "filesystem", "github", "github-cursor", "linear", "notion", "supabase", "weather", "zapier"}
	slices.Sort(names)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("upstreams after two merges (-want +got):\n%s", diff)
	}
	merged, _ := os.ReadFile(path)
	for _, w := range []string{"# my own note", `"github" in cursor; the profile's "github" is another server`} {
		if !strings.Contains(string(merged), w) {
			t.Errorf("the merged file lacks %q:\n%s", w, merged)
		}
	}
	// The same merge again adds nothing, the renamed server included.
	_, stderr, err = runCLI(t, vars, "import", "cursor", third, "--write", "--merge")
	if again, _ := os.ReadFile(path); err != nil || string(again) != string(merged) || !strings.Contains(stderr, `already, as "github-cursor"`) {
		t.Errorf("a merge done twice: %v; notes:\n%s\nfile:\n%s", err, stderr, again)
	}
	if backups, _ := filepath.Glob(path + ".bak-*"); len(backups) != 3 {
		t.Errorf("backups %v, want one per merge", backups)
	}
	if _, _, err := runCLI(t, vars, "import", "cursor", third, "--write"); err == nil || !strings.Contains(err.Error(), "--merge") {
		t.Errorf("a third --write with neither flag: got %v, want a refusal naming --merge", err)
	}
}

// A server of one name and command with another environment or header
// (another memory file, another account's token) is another server: a
// merge imports it under another name, never drops it as a duplicate.
func TestImportMergeKeepsAServerWithAnotherEnv(t *testing.T) {
	vars, places := userDirs(t)
	path := filepath.Join(places.ConfigDir, "mcp-router", "profiles.yaml")
	memory := func(file string) string {
		return `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "` + file + `"}},
			"remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${` + strings.ToUpper(file[:4]) + `_TOKEN}"}}}}`
	}
	dir := t.TempDir()
	if _, _, err := runCLI(t, vars, "import", "claude-desktop", writeFile(t, dir, "desktop.json", memory("work.jsonl")), "--write"); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI(t, vars, "import", "cursor", writeFile(t, dir, "cursor.json", memory("home.jsonl")), "--write", "--merge")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, u := range mustProfile(t, cfg).Upstreams {
		got[u.Name] = u.Env["MEMORY_FILE_PATH"] + u.Headers["Authorization"]
	}
	want := map[string]string{"memory": "work.jsonl", "memory-cursor": "home.jsonl", "remote": "Bearer ${WORK_TOKEN}", "remote-cursor": "Bearer ${HOME_TOKEN}"}
	if diff := cmp.Diff(want, got); diff != "" || !strings.Contains(stderr, `imported as "memory-cursor"`) {
		t.Errorf("upstreams after the merge (-want +got):\n%s\nnotes:\n%s", diff, stderr)
	}
}

func mustProfile(t *testing.T, cfg *config.Config) config.Profile {
	t.Helper()
	p, err := cfg.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
