package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// readJSON decodes a JSON file, with VS Code's comments allowed.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clean, _ := config.JSONC(data)
	var m map[string]any
	if err := json.Unmarshal(clean, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// Install adds the gateway and keeps everything else of the client's file
// as it was, after a backup; a second install is refused without --force.
func TestInstallKeepsTheClientsFile(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		client, file string
		hasRouter    bool // the file has an mcp-router entry already
	}{
		{config.ClientClaudeDesktop, "claude_desktop_config.json", true},
		{config.ClientClaudeCode, "claude.json", false},
		{config.ClientCursor, "cursor-home/.cursor/mcp.json", false},
		{config.ClientVSCode, "vscode-project/.vscode/mcp.json", false},
		{config.ClientWindsurf, "windsurf-home/.codeium/windsurf/mcp_config.json", false},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			vars, _ := userDirs(t)
			original, err := os.ReadFile(filepath.Join(importData, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			file := writeFile(t, t.TempDir(), filepath.Base(tt.file), string(original))
			before := readJSON(t, file)
			profiles := writeFile(t, t.TempDir(), "profiles.yaml", calcProfile)
			args := []string{"install", tt.client, file, "--config", profiles}
			if tt.hasRouter {
				_, _, err = runCLI(t, vars, args...)
				if err == nil || !strings.Contains(err.Error(), "mcpServers.mcp-router exists already") || !strings.Contains(err.Error(), "--force") {
					t.Fatalf("install over an mcp-router entry: got %v, want a refusal naming it and --force", err)
				}
				args = append(args, "--force")
			}
			out, stderr, err := runCLI(t, vars, args...)
			if err != nil {
				t.Fatal(err)
			}
			key := config.ServersKey(tt.client)
			after := readJSON(t, file)
			entry := after[key].(map[string]any)["mcp-router"]
			want := map[string]any{"command": exe, "args": []any{"serve", "--config", profiles}}
			if tt.client == config.ClientClaudeCode || tt.client == config.ClientVSCode {
				want["type"] = "stdio"
			}
			if diff := cmp.Diff(want, entry); diff != "" {
				t.Errorf("the mcp-router entry (-want +got):\n%s", diff)
			}
			// Everything else is as it was.
			delete(after[key].(map[string]any), "mcp-router")
			delete(before[key].(map[string]any), "mcp-router")
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("install changed the rest of the file (-before +after):\n%s", diff)
			}
			backups, _ := filepath.Glob(file + ".bak-*")
			if len(backups) == 0 {
				t.Fatal("no backup")
			}
			if first, _ := os.ReadFile(backups[0]); string(first) != string(original) {
				t.Error("the first backup is not the original file")
			}
			if !strings.Contains(out, "next: restart") || !strings.Contains(out, "mcp-router import "+tt.client+" --write") {
				t.Errorf("install does not say what to do next:\n%s", out)
			}
			if tt.client == config.ClientVSCode && !strings.Contains(stderr, "comments") {
				t.Errorf("VS Code's comments are lost without a word:\n%s", stderr)
			}
			if _, _, err := runCLI(t, vars, "install", tt.client, file); err == nil || !strings.Contains(err.Error(), "--force") {
				t.Errorf("installing twice: got %v, want a refusal", err)
			}
		})
	}
}

// With no file, install writes the client's user file, creating it.
func TestInstallCreatesTheUserFile(t *testing.T) {
	vars, places := userDirs(t)
	out, _, err := runCLI(t, vars, "install", "cursor")
	want := filepath.Join(places.Home, ".cursor", "mcp.json")
	if err != nil || !strings.Contains(out, "created "+want) || !strings.Contains(out, "built-in default profile") {
		t.Fatalf("install cursor: %v\n%s", err, out)
	}
	servers := readJSON(t, want)["mcpServers"].(map[string]any)
	if _, ok := servers["mcp-router"]; !ok || len(servers) != 1 {
		t.Errorf("created %v, want the mcp-router entry alone", servers)
	}
	if backups, _ := filepath.Glob(want + ".bak-*"); len(backups) != 0 {
		t.Errorf("a backup of a file that did not exist: %v", backups)
	}
}

func TestInstallRefusesBadFiles(t *testing.T) {
	vars, _ := userDirs(t)
	dir := t.TempDir()
	tests := []struct{ name, content, want string }{
		{"not json", `{"mcpServers": `, "not a JSON object"},
		{"servers not an object", `{"mcpServers": ["a"]}`, "mcpServers: want an object"},
		{"another name runs mcp-router", `{"mcpServers": {"gateway": {"command": "/opt/bin/mcp-router", "args": ["serve"]}}}`, "mcpServers.gateway runs mcp-router already"},
	}
	for _, tt := range tests {
		file := writeFile(t, dir, "c.json", tt.content)
		_, _, err := runCLI(t, vars, "install", "claude-desktop", file)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: got %v, want an error naming the file and %q", tt.name, err, tt.want)
		}
		if now, _ := os.ReadFile(file); string(now) != tt.content {
			t.Errorf("%s: the refused install changed the file", tt.name)
		}
	}
}

// The built binary installs itself, and the entry it writes starts a
// working gateway the way the client will.
func TestInstallWritesTheRunningBinary(t *testing.T) {
	bin := buildBinary(t)
	vars, places := userDirs(t)
	profiles := writeFile(t, t.TempDir(), "profiles.yaml", calcProfile)
	cmd := exec.Command(bin, "install", "claude-desktop", "--config", profiles)
	cmd.Env = []string{"HOME=" + vars["HOME"], "XDG_CONFIG_HOME=" + vars["XDG_CONFIG_HOME"]}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	file := filepath.Join(places.ConfigDir, "Claude", "claude_desktop_config.json")
	var entry struct {
		Command string
		Args    []string
	}
	raw, _ := json.Marshal(readJSON(t, file)["mcpServers"].(map[string]any)["mcp-router"])
	if err := json.Unmarshal(raw, &entry); err != nil {
		t.Fatal(err)
	}
	if entry.Command != bin {
		t.Errorf("command %q, want the binary that ran, %q", entry.Command, bin)
	}
	c := stdioClient(t, entry.Command, entry.Args...)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "calculator_add", "arguments": map[string]any{"a": 2, "b": 3}}}})
	if err != nil || res.IsError {
		t.Fatalf("calling through the installed entry: %v %+v", err, res)
	}
}

// --replace takes out of the client the servers the profile runs, and
// only those.
func TestInstallReplaceMovesImportedServers(t *testing.T) {
	vars, places := userDirs(t)
	desktop := filepath.Join(places.ConfigDir, "Claude", "claude_desktop_config.json")
	original, err := os.ReadFile(filepath.Join(importData, "claude_desktop_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(desktop), 0o700)
	writeFile(t, filepath.Dir(desktop), filepath.Base(desktop), string(original))
	if _, _, err := runCLI(t, vars, "install", "claude-desktop", "--replace", "--force"); err == nil || !strings.Contains(err.Error(), "import claude-desktop --write") {
		t.Errorf("--replace with no profile: got %v, want a pointer to import --write", err)
	}
	if _, _, err := runCLI(t, vars, "import", "claude-desktop", "--write"); err != nil {
		t.Fatal(err)
	}
	// A server added after the import is not in the profile: it stays.
	doc := readJSON(t, desktop)
	doc["mcpServers"].(map[string]any)["added-later"] = map[string]any{"command": "later"}
	data, _ := json.Marshal(doc)
	writeFile(t, filepath.Dir(desktop), filepath.Base(desktop), string(data))

	out, _, err := runCLI(t, vars, "install", "claude-desktop", "--replace", "--force")
	if err != nil {
		t.Fatal(err)
	}
	after := readJSON(t, desktop)
	var names []string
	for name := range after["mcpServers"].(map[string]any) {
		names = append(names, name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"added-later", "mcp-router"}, names); diff != "" {
		t.Errorf("servers left in the client (-want +got):\n%s", diff)
	}
	if after["globalShortcut"] != "Alt+Space" {
		t.Errorf("other settings lost: %v", after)
	}
	if !strings.Contains(out, `removed 7 servers`) || !strings.Contains(out, `"Brave Search"`) || !strings.Contains(out, `"added-later"`) {
		t.Errorf("the report does not say what moved and what stayed:\n%s", out)
	}
}

// A client file kept as a link (a dotfiles repository) stays a link: the
// file it points to is what changes.
func TestInstallKeepsALinkedFile(t *testing.T) {
	vars, _ := userDirs(t)
	dir := t.TempDir()
	real := writeFile(t, dir, "real.json", `{"mcpServers": {}}`)
	link := filepath.Join(dir, "mcp.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, _, err := runCLI(t, vars, "install", "cursor", link); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file: %v %v", info.Mode(), err)
	}
	if _, ok := readJSON(t, real)["mcpServers"].(map[string]any)["mcp-router"]; !ok {
		t.Error("the linked file lacks the entry")
	}
}

// The client starts the gateway without the user's shell environment, so
// install writes the entry's "env": per client, a reference the client
// fills in, or a value the same file held in clear already; never a
// secret copied in clear from elsewhere.
func TestInstallWritesTheEnvTheProfileNeeds(t *testing.T) {
	const ghp = "ghp_FAKE0example0TOKEN0for0tests0only0000" // in the Claude Desktop fixture, in clear
	desktop, err := os.ReadFile(filepath.Join(importData, "claude_desktop_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The variables the imported profile and the extra one read.
	imported := []string{"BRAVE_API_KEY", "GITHUB_PERSONAL_ACCESS_TOKEN", "NOTION_TOKEN", "OPENWEATHER_API_KEY"}
	refs := func(format string, names ...string) map[string]string {
		m := map[string]string{}
		for _, n := range names {
			m[n] = fmt.Sprintf(format, n)
		}
		return m
	}
	all := append([]string{"API_KEY"}, imported...)
	tests := []struct {
		client, file string            // the client's file before install ("" = none)
		want         map[string]string // nil: the values Claude Desktop's file holds in clear
		inputs       []string          // VS Code's inputs
		report       []string
	}{
		{config.ClientClaudeDesktop, string(desktop), nil, nil, []string{"set API_KEY in the \"env\"", "does not expand variables"}},
		{config.ClientClaudeCode, "", refs("${%s}", all...), nil, []string{"passes API_KEY, BRAVE_API_KEY", "Claude Code expands"}},
		{config.ClientCursor, `{"mcpServers": {}}`, refs("${env:%s}", all...), nil, []string{"Cursor expands"}},
		{config.ClientVSCode, `{"inputs": [{"type": "promptString", "id": "API_KEY", "description": "mine"}], "servers": {}}`,
			refs("${input:%s}", all...), all, []string{"VS Code prompts"}},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			vars, _ := userDirs(t)
			in := writeFile(t, t.TempDir(), "claude_desktop_config.json", string(desktop))
			profile, _, err := runCLI(t, vars, "import", "claude-desktop", in, "--env-refs")
			if err != nil {
				t.Fatal(err)
			}
			profile += "  more:\n    upstreams:\n      x: {command: x, env: {A: \"${WITH_FALLBACK:-1}\", B: \"$${LITERAL}\", C: \"${API_KEY}\"}}\n"
			profiles := writeFile(t, t.TempDir(), "profiles.yaml", profile)
			file := filepath.Join(t.TempDir(), "client.json")
			if tt.file != "" {
				writeFile(t, filepath.Dir(file), filepath.Base(file), tt.file)
			}
			out, _, err := runCLI(t, vars, "install", tt.client, file, "--config", profiles, "--force")
			if err != nil {
				t.Fatal(err)
			}
			doc := readJSON(t, file)
			entry := doc[config.ServersKey(tt.client)].(map[string]any)["mcp-router"].(map[string]any)
			got := map[string]string{}
			for k, v := range entry["env"].(map[string]any) {
				got[k] = v.(string)
			}
			if tt.want == nil { // the values of Claude Desktop's own file
				for _, v := range imported {
					if len(got[v]) < 8 || !strings.Contains(string(desktop), got[v]) {
						t.Errorf("env %s = %q, want the value the file held", v, got[v])
					}
				}
				if _, ok := got["API_KEY"]; ok || len(got) != len(imported) {
					t.Errorf("env %v, want the file's values alone", got)
				}
			} else if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if tt.client != config.ClientClaudeDesktop && strings.Contains(mustRead(t, file), ghp) {
				t.Errorf("a secret of another client's file was written in clear:\n%s", mustRead(t, file))
			}
			var ids []string
			for _, in := range asList(doc["inputs"]) {
				ids = append(ids, in.(map[string]any)["id"].(string))
			}
			slices.Sort(ids)
			if diff := cmp.Diff(tt.inputs, ids); diff != "" {
				t.Errorf("inputs (-want +got):\n%s", diff)
			}
			for _, w := range tt.report {
				if !strings.Contains(out, w) {
					t.Errorf("the report lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "WITH_FALLBACK") || strings.Contains(out, "LITERAL") {
				t.Errorf("a variable with a fallback, or a literal, is named:\n%s", out)
			}
			// What the person sets in the entry stays through an install
			// with --force.
			doc[config.ServersKey(tt.client)].(map[string]any)["mcp-router"].(map[string]any)["env"] = map[string]any{"API_KEY": "set-by-hand", "EXTRA": "x"}
			data, _ := json.Marshal(doc)
			writeFile(t, filepath.Dir(file), filepath.Base(file), string(data))
			if out, _, err = runCLI(t, vars, "install", tt.client, file, "--config", profiles, "--force"); err != nil {
				t.Fatal(err)
			}
			env := readJSON(t, file)[config.ServersKey(tt.client)].(map[string]any)["mcp-router"].(map[string]any)["env"].(map[string]any)
			if env["API_KEY"] != "set-by-hand" || env["EXTRA"] != "x" || strings.Contains(out, "set API_KEY") {
				t.Errorf("a second install: env %v, want the values set by hand kept\n%s", env, out)
			}
		})
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A variable every client gives the servers it starts (${HOME} in a path) is
// neither passed in the entry nor asked of the user: VS Code prompted for
// "HOME" as a password, and what was typed replaced the home folder.
func TestInstallLeavesTheVariablesEveryClientSets(t *testing.T) {
	vars, _ := userDirs(t)
	profiles := writeFile(t, t.TempDir(), "profiles.yaml", `profiles:
  default:
    upstreams:
      fs: {command: npx, args: [-y, "@modelcontextprotocol/server-filesystem", "${HOME}/Documents"], env: {TOKEN: "${TOK}", P: "${PATH}"}}
`)
	file := filepath.Join(t.TempDir(), "mcp.json")
	out, _, err := runCLI(t, vars, "install", "vscode", file, "--config", profiles)
	if err != nil {
		t.Fatal(err)
	}
	doc := readJSON(t, file)
	env := doc["servers"].(map[string]any)["mcp-router"].(map[string]any)["env"]
	if diff := cmp.Diff(map[string]any{"TOK": "${input:TOK}"}, env); diff != "" {
		t.Errorf("the entry's env (-want +got):\n%s\n%s", diff, out)
	}
	if inputs := doc["inputs"].([]any); len(inputs) != 1 || inputs[0].(map[string]any)["id"] != "TOK" {
		t.Errorf("inputs: got %v, want TOK alone", inputs)
	}
}

// An upstream switched off (enabled: false) does not start, so install
// neither passes nor prompts for the variables it alone reads.
func TestInstallLeavesTheVariablesOfUpstreamsSwitchedOff(t *testing.T) {
	vars, _ := userDirs(t)
	profiles := writeFile(t, t.TempDir(), "profiles.yaml", `profiles:
  default:
    upstreams:
      on: {command: npx, args: [-y, server-on], env: {TOKEN: "${ON_TOKEN}"}}
      off: {command: npx, args: [-y, server-off], env: {TOKEN: "${OFF_TOKEN}"}, enabled: false}
`)
	file := filepath.Join(t.TempDir(), "mcp.json")
	out, _, err := runCLI(t, vars, "install", "vscode", file, "--config", profiles)
	if err != nil {
		t.Fatal(err)
	}
	env := readJSON(t, file)["servers"].(map[string]any)["mcp-router"].(map[string]any)["env"]
	if diff := cmp.Diff(map[string]any{"ON_TOKEN": "${input:ON_TOKEN}"}, env); diff != "" {
		t.Errorf("the entry's env (-want +got):\n%s\n%s", diff, out)
	}
}

// The entry names the profile it found with an absolute --config: a
// client starts the gateway in a folder of its choosing, and the gateway
// never reads a profiles.yaml found there.
func TestInstallWritesAnAbsoluteConfig(t *testing.T) {
	vars, places := userDirs(t)
	args := func(flags ...string) []any {
		t.Helper()
		file := filepath.Join(t.TempDir(), "mcp.json")
		if _, _, err := runCLI(t, vars, append([]string{"install", "cursor", file}, flags...)...); err != nil {
			t.Fatal(err)
		}
		return readJSON(t, file)["mcpServers"].(map[string]any)["mcp-router"].(map[string]any)["args"].([]any)
	}
	if got := args(); len(got) != 1 {
		t.Errorf("no profile anywhere: args %v, want serve alone (the built-in default)", got)
	}
	if _, _, err := runCLI(t, vars, "import", "claude-desktop", filepath.Join(importData, "claude_desktop_config.json"), "--write"); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(places.ConfigDir, "mcp-router", "profiles.yaml")
	if diff := cmp.Diff([]any{"serve", "--config", user}, args()); diff != "" {
		t.Errorf("the user config directory's profile (-want +got):\n%s", diff)
	}
	dir := t.TempDir()
	writeFile(t, dir, "work.yaml", calcProfile)
	t.Chdir(dir)
	if diff := cmp.Diff([]any{"serve", "--config", filepath.Join(dir, "work.yaml")}, args("--config", "work.yaml")); diff != "" {
		t.Errorf("a relative --config (-want +got):\n%s", diff)
	}
	vars["MCP_ROUTER_CONFIG"] = "work.yaml"
	if diff := cmp.Diff([]any{"serve", "--config", filepath.Join(dir, "work.yaml")}, args()); diff != "" {
		t.Errorf("$MCP_ROUTER_CONFIG (-want +got):\n%s", diff)
	}
}

// --replace for Claude Code handles each scope: the user's servers and
// each project's in ~/.claude.json go, and the project's own .mcp.json,
// shared through its repository, stays as it is while its servers are
// turned off for this user.
func TestInstallReplaceCoversClaudeCodeScopes(t *testing.T) {
	vars, places := userDirs(t)
	user, err := os.ReadFile(filepath.Join(importData, "claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	claudeJSON := writeFile(t, places.Home, ".claude.json", string(user))
	project := t.TempDir()
	mcpJSON, err := os.ReadFile(filepath.Join(importData, "claude-code-project", ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, project, ".mcp.json", string(mcpJSON))
	t.Chdir(project)
	if _, _, err := runCLI(t, vars, "import", "claude-code", "--write"); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, vars, "install", "claude-code", "--replace")
	if err != nil {
		t.Fatal(err)
	}
	after := readJSON(t, claudeJSON)
	servers := func(m any) []string {
		var names []string
		for n := range m.(map[string]any) {
			names = append(names, n)
		}
		slices.Sort(names)
		return names
	}
	if diff := cmp.Diff([]string{"mcp-router"}, servers(after["mcpServers"])); diff != "" {
		t.Errorf("user servers left (-want +got):\n%s", diff)
	}
	projects := after["projects"].(map[string]any)
	for _, p := range []string{"/home/ada/app", "/home/ada/site"} {
		if left := servers(projects[p].(map[string]any)["mcpServers"]); len(left) != 0 {
			t.Errorf("project %s keeps %v beside the gateway", p, left)
		}
	}
	if projects["/home/ada/app"].(map[string]any)["hasTrustDialogAccepted"] != true || after["numStartups"] != float64(42) {
		t.Errorf("other settings of ~/.claude.json lost: %v", after)
	}
	off := projects[project].(map[string]any)["disabledMcpjsonServers"]
	if diff := cmp.Diff([]any{"api", "postgres", "sentry"}, off); diff != "" {
		t.Errorf("the .mcp.json servers turned off for the user (-want +got):\n%s", diff)
	}
	if now, _ := os.ReadFile(filepath.Join(project, ".mcp.json")); string(now) != string(mcpJSON) {
		t.Error("the project's shared .mcp.json was changed")
	}
	for _, w := range []string{`"postgres" (project /home/ada/app)`, "turned off for you", "stays as it is"} {
		if !strings.Contains(out, w) {
			t.Errorf("the report lacks %q:\n%s", w, out)
		}
	}
}

// Installed beside servers the profile runs already, install says they
// now run twice and that --force --replace takes them out; a server the
// profile lacks is pointed at import --write --merge (import --write alone
// is refused once profiles.yaml exists).
func TestInstallSaysWhichServersRunTwice(t *testing.T) {
	vars, places := userDirs(t)
	desktop := filepath.Join(places.ConfigDir, "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(desktop), 0o700)
	writeFile(t, filepath.Dir(desktop), filepath.Base(desktop),
		`{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`)
	if _, _, err := runCLI(t, vars, "import", "claude-desktop", "--write"); err != nil {
		t.Fatal(err)
	}
	doc := readJSON(t, desktop)
	doc["mcpServers"].(map[string]any)["added-later"] = map[string]any{"command": "later"}
	data, _ := json.Marshal(doc)
	writeFile(t, filepath.Dir(desktop), filepath.Base(desktop), string(data))

	out, _, err := runCLI(t, vars, "install", "claude-desktop")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`still runs 1 servers the profile runs too, so they run twice (beside the gateway and behind it): "memory".`,
		"to take them out of Claude Desktop: mcp-router install claude-desktop --force --replace",
		`still runs 1 other servers beside the gateway: "added-later".`,
		"mcp-router import claude-desktop --write --merge",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install's report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--write,") {
		t.Errorf("install points at import --write, which the existing profile refuses:\n%s", out)
	}
}

// On a machine where Claude Code has not written ~/.claude.json yet, --replace still turns off, for
// this user, the project's .mcp.json servers that the gateway now runs, in the file it creates:
// without that they run twice, beside the gateway and behind it.
func TestInstallReplaceWithoutTheUserFileTurnsOffTheProjects(t *testing.T) {
	vars, places := userDirs(t)
	project := t.TempDir()
	mcpJSON, err := os.ReadFile(filepath.Join(importData, "claude-code-project", ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, project, ".mcp.json", string(mcpJSON))
	t.Chdir(project)
	if _, _, err := runCLI(t, vars, "import", "claude-code", "--write"); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, vars, "install", "claude-code", "--replace")
	if err != nil {
		t.Fatal(err)
	}
	after := readJSON(t, filepath.Join(places.Home, ".claude.json"))
	projects, _ := after["projects"].(map[string]any)
	p, _ := projects[project].(map[string]any)
	if diff := cmp.Diff([]any{"api", "postgres", "sentry"}, p["disabledMcpjsonServers"]); diff != "" {
		t.Errorf("the .mcp.json servers turned off for the user (-want +got):\n%s", diff)
	}
	if !strings.Contains(out, "turned off for you") {
		t.Errorf("the report does not say the project's servers were turned off:\n%s", out)
	}
}

// Installed without --replace, install says that the project's .mcp.json servers the profile runs
// now run twice, and how to turn them off for this user.
func TestInstallSaysWhichProjectServersRunTwice(t *testing.T) {
	vars, _ := userDirs(t)
	project := t.TempDir()
	mcpJSON, err := os.ReadFile(filepath.Join(importData, "claude-code-project", ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	mcpFile := writeFile(t, project, ".mcp.json", string(mcpJSON))
	t.Chdir(project)
	if _, _, err := runCLI(t, vars, "import", "claude-code", "--write"); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, vars, "install", "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`Claude Code also runs "api", "postgres", "sentry" of ` + mcpFile + `, which the profile runs too, so they run twice`,
		"to turn them off for you alone: mcp-router install claude-code --force --replace",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install's report lacks %q:\n%s", want, out)
		}
	}
}
