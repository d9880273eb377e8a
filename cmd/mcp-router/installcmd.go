package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// routerName is the server name install gives the gateway in a client.
const routerName = "mcp-router"

func newInstallCmd(e *env) *cobra.Command {
	inst := &cobra.Command{
		Use:   "install CLIENT [FILE]",
		Short: "Add mcp-router to the MCP servers of Claude Desktop, Claude Code, Cursor or VS Code",
	}
	var f installFlags
	inst.PersistentFlags().BoolVar(&f.force, "force", false, "replace an existing mcp-router entry")
	inst.PersistentFlags().BoolVar(&f.replace, "replace", false, "remove from the client the servers the profile runs already (after import --write)")
	for _, client := range config.Clients {
		title := clientTitles[client]
		inst.AddCommand(&cobra.Command{
			Use:   client + " [FILE]",
			Short: "Add mcp-router to " + title + "'s MCP servers",
			Long: fmt.Sprintf(`Add an %q entry to %s's user configuration (FILE, else the last of
%s) that runs this binary with "serve --config" and the absolute path
of the profile it finds (--config, $MCP_ROUTER_CONFIG, else profiles.yaml in the
user config directory), and --profile when given. Its "env" passes the
variables the profile reads: as references the client fills in, or values
this client's file holds already; never a secret copied from elsewhere. The
file is backed up first (FILE.bak-<time>); every other server and setting
stays. Run "mcp-router import %s --write" first to move your servers behind
the gateway; --replace then takes them out of the client, in every scope.`, routerName, title, clientWhere[client], client),
			Example: fmt.Sprintf("  mcp-router install %s\n  mcp-router install %s --config ~/work/profiles.yaml", client, client),
			Args:    cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				file := ""
				if len(args) == 1 {
					file = args[0]
				}
				return e.runInstall(client, file, f)
			},
		})
	}
	return inst
}

type installFlags struct {
	force, replace bool
}

// routerEntry is the client's entry for the gateway.
type routerEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

func (e *env) runInstall(client, file string, f installFlags) error {
	places, err := e.places()
	if err != nil {
		return err
	}
	if file == "" {
		if file = config.UserFile(client, places); places.Home == "" || places.ConfigDir == "" {
			return fmt.Errorf("%w; name the file", errNoHome)
		}
	}
	entry, err := e.routerEntry(client, places)
	if err != nil {
		return err
	}
	data, err := config.ReadClientFile(file)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var rep replacement
	if f.replace && existed {
		if rep, err = e.replacement(client, file, places); err != nil {
			return err
		}
	}
	env := e.entryEnv(client, file, data, places)
	entry.Env = env.values
	backup, others, err := e.writeEntry(client, file, data, entry, f.force, rep, env.inputs)
	if err != nil {
		return err
	}
	return e.installReport(client, file, backup, existed, entry, rep, others, env)
}

// writeEntry adds the gateway's entry to the client's file (data) and
// writes it, keeping a backup; it returns the backup's path and the
// names of the other servers.
func (e *env) writeEntry(client, file string, data []byte, entry routerEntry, force bool, rep replacement, inputs []vscodeInput) (string, []string, error) {
	out, others, err := addRouter(data, config.ServersKey(client), entry, force, rep, inputs)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", file, err)
	}
	if _, comments := config.JSONC(data); comments {
		fmt.Fprintf(e.stderr, "note: %s had comments; the rewritten file has none (the backup keeps them)\n", file)
	}
	backup, err := replaceFile(file, out, 0o600, true)
	return backup, others, err
}

// routerEntry runs this binary, with the profile the flags name and the
// configuration it found, as an absolute path: a client starts the
// gateway in a directory of its choosing.
func (e *env) routerEntry(client string, places config.Places) (routerEntry, error) {
	exe, err := os.Executable()
	if err != nil {
		return routerEntry{}, fmt.Errorf("finding this binary: %w", err)
	}
	if strings.Contains(exe, "go-build") {
		fmt.Fprintf(e.stderr, "note: %s is a temporary build (go run); install the binary (go install ./cmd/mcp-router) and run install from it\n", exe)
	}
	entry := routerEntry{Command: exe, Args: []string{"serve"}}
	if client == config.ClientClaudeCode || client == config.ClientVSCode {
		entry.Type = "stdio"
	}
	if path := e.profilePath(places); path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return routerEntry{}, err
		}
		if _, err := os.Stat(abs); err == nil || e.configPath != "" {
			entry.Args = append(entry.Args, "--config", abs)
		}
	}
	if e.profile != "" {
		entry.Args = append(entry.Args, "--profile", e.profile)
	}
	return entry, nil
}

// addRouter puts the entry under key in a client's JSON file, keeping
// every other field, and returns the new file and the other servers'
// names. An existing entry for the gateway is replaced only with force.
func addRouter(data []byte, key string, entry routerEntry, force bool, rep replacement, inputs []vscodeInput) ([]byte, []string, error) {
	top, servers, err := clientServers(data, key)
	if err != nil {
		return nil, nil, err
	}
	others, err := keepServers(servers, key, force, rep)
	if err != nil {
		return nil, nil, err
	}
	if servers[routerName], err = json.Marshal(entry); err != nil {
		return nil, nil, err
	}
	if top[key], err = json.Marshal(servers); err != nil {
		return nil, nil, err
	}
	if err := addInputs(top, inputs); err != nil {
		return nil, nil, err
	}
	if err := rep.applyProjects(top); err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(top); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), others, nil
}

// clientServers reads a client's JSON file (comments allowed): its top
// object, and the object of servers under key.
func clientServers(data []byte, key string) (top, servers map[string]json.RawMessage, _ error) {
	top, servers = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	if clean, _ := config.JSONC(data); len(bytes.TrimSpace(clean)) > 0 {
		if err := json.Unmarshal(clean, &top); err != nil {
			return nil, nil, fmt.Errorf("not a JSON object: %w", err)
		}
	}
	if raw, ok := top[key]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, nil, fmt.Errorf("%s: want an object of servers by name", key)
		}
	}
	return top, servers, nil
}

// keepServers removes from servers those rep replaces, and returns the
// names of the others; without force, an entry that runs the gateway
// already is an error.
func keepServers(servers map[string]json.RawMessage, key string, force bool, rep replacement) ([]string, error) {
	var others []string
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		var s struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		_ = json.Unmarshal(servers[name], &s) // an entry of another shape is not the gateway
		switch {
		case name == routerName && !force:
			return nil, fmt.Errorf("%s.%s exists already; pass --force to replace it", key, routerName)
		case name != routerName && config.RunsRouter(s.Command, s.Args) && !force:
			return nil, fmt.Errorf("%s.%s runs mcp-router already; pass --force to add %q beside it", key, name, routerName)
		case rep.removes(name):
			delete(servers, name)
		case name != routerName:
			others = append(others, name)
		}
	}
	return others, nil
}

// installReport says what install did and what to do next.
func (e *env) installReport(client, file, backup string, existed bool, entry routerEntry, rep replacement, others []string, env entryEnv) error {
	w := e.stdout
	title := clientTitles[client]
	switch {
	case backup != "":
		fmt.Fprintf(w, "added %q to %s (the old file is in %s)\n", routerName, file, backup)
	case existed:
		fmt.Fprintf(w, "added %q to %s\n", routerName, file)
	default:
		fmt.Fprintf(w, "created %s with %q\n", file, routerName)
	}
	fmt.Fprintf(w, "  command: %s\n  args: %s\n", entry.Command, strings.Join(entry.Args, " "))
	switch {
	case env.profile == "":
		fmt.Fprintf(w, "no profiles.yaml yet: the gateway runs its built-in default profile until you run: mcp-router import %s --write, then install again with --force\n", client)
	case len(env.vars) > 0:
		fmt.Fprintf(w, "%s reads %s from the environment, and %s starts mcp-router without your shell's:\n", env.profile, strings.Join(env.vars, ", "), title)
		if len(entry.Env) > 0 {
			fmt.Fprintf(w, "the \"env\" of the %q entry passes %s (%s)\n", routerName, strings.Join(slices.Sorted(maps.Keys(entry.Env)), ", "), env.how)
		}
		if len(env.missing) > 0 {
			fmt.Fprintf(w, "set %s in the \"env\" of the %q entry in %s (or give them fallbacks, ${VAR:-value}): %s\n",
				strings.Join(env.missing, ", "), routerName, file, env.why)
		}
	}
	rep.report(w, file, title)
	if len(others) > 0 {
		fmt.Fprintf(w, "%s still runs %d other servers beside the gateway: %s.\n", title, len(others), quoteList(others))
		fmt.Fprintf(w, "to move them behind it: mcp-router import %s --write, check the profile, then install again with --force --replace\n", client)
	}
	_, err := fmt.Fprintf(w, "next: restart %s\n", title)
	return err
}

// profilePath is the profiles.yaml the installed entry runs: --config,
// else $MCP_ROUTER_CONFIG, else the one in the user config directory ("" when that is unknown).
func (e *env) profilePath(places config.Places) string {
	if path := e.orEnv(e.configPath, "MCP_ROUTER_CONFIG"); path != "" {
		return path
	}
	if places.ConfigDir == "" {
		return ""
	}
	return filepath.Join(places.ConfigDir, "mcp-router", "profiles.yaml")
}
