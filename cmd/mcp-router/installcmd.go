package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// routerName is the server name install gives the gateway in a client.
const routerName = "mcp-router"

func newInstallCmd(e *env) *cobra.Command {
	inst := &cobra.Command{
		Use:   "install CLIENT [FILE]",
		Short: "Add mcp-router to the MCP servers of Claude Desktop, Claude Code, Cursor, VS Code or Windsurf",
		RunE:  func(_ *cobra.Command, args []string) error { return unknownClient(args) },
	}
	var f installFlags
	inst.PersistentFlags().BoolVar(&f.force, "force", false, "replace an existing mcp-router entry")
	inst.PersistentFlags().BoolVar(&f.replace, "replace", false, "remove from the client the servers the profile runs already (after import --write)")
	for _, client := range config.Clients {
		title := clients[client].title
		inst.AddCommand(&cobra.Command{
			Use:   client + " [FILE]",
			Short: "Add mcp-router to " + title + "'s MCP servers",
			Long: fmt.Sprintf(`Add an %q entry to %s's user configuration (FILE, else the last of
%s) that runs this binary with "serve --config" and the absolute path
of the profile it finds (--config, $MCP_ROUTER_CONFIG, else profiles.yaml in the
user config directory), and --profile when given. Its "env" passes the
variables the profile reads (none of an upstream with enabled: false): as references the client fills in, or values
this client's file holds already; never a secret copied from elsewhere. The
file is backed up first (FILE.bak-<time>); every other server and setting
stays. Run "mcp-router import %s --write" first to move your servers behind
the gateway; --replace then takes them out of the client, in every scope.`, routerName, title, clients[client].where, client),
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
	if f.replace {
		if rep, err = e.replacement(client, file, places); err != nil {
			return err
		}
	}
	env := e.entryEnv(client, file, data, places)
	entry.Env = env.values
	running := e.alreadyRun(client, file, places, f.replace)
	backup, others, err := e.writeEntry(client, file, data, entry, f.force, rep, env.inputs)
	if err != nil {
		return err
	}
	e.installReport(client, file, backup, existed, entry, rep, env)
	e.reportOthers(client, others, running)
	_, err = fmt.Fprintf(e.stdout, "next: restart %s\n", clients[client].title)
	return err
}

// alreadyRun is what --replace would take out of the client: the servers of its files that the
// profile runs already (zero when it cannot tell, or when skip: --replace takes them out).
func (e *env) alreadyRun(client, file string, places config.Places, skip bool) replacement {
	if skip {
		return replacement{}
	}
	rep, err := e.replacement(client, file, places)
	if err != nil {
		return replacement{} // no profile yet, or one that does not load: reportOthers says import
	}
	return rep
}

// reportOthers says which servers the client still runs beside the gateway, and the next step for
// each: those the profile runs already (they run twice) go with install --force --replace, or, in a
// project's shared file that the client cannot turn off for one user, by hand; the others join the
// profile first with import --write --merge.
func (e *env) reportOthers(client string, others []string, running replacement) {
	w, title := e.stdout, clients[client].title
	var twice, rest []string
	for _, name := range others {
		if running.removes(name) {
			twice = append(twice, name)
		} else {
			rest = append(rest, name)
		}
	}
	if len(running.projectServers) > 0 {
		fmt.Fprintf(w, "%s also runs %s of %s, which the profile runs too, so they run twice (beside the gateway and behind it).\n", title, quoteList(running.projectServers), running.projectFile)
		if !running.off {
			fmt.Fprintf(w, "that file is the project's, shared through its repository: remove them there if everyone on the project uses the gateway\n")
		} else if len(twice) == 0 {
			fmt.Fprintf(w, "to turn them off for you alone: mcp-router install %s --force --replace\n", client)
		}
	}
	if len(twice) > 0 {
		fmt.Fprintf(w, "%s still runs %d servers the profile runs too, so they run twice (beside the gateway and behind it): %s.\n", title, len(twice), quoteList(twice))
		fmt.Fprintf(w, "to take them out of %s: mcp-router install %s --force --replace\n", title, client)
	}
	if len(rest) > 0 {
		fmt.Fprintf(w, "%s still runs %d other servers beside the gateway: %s.\n", title, len(rest), quoteList(rest))
		fmt.Fprintf(w, "to move them behind it: mcp-router import %s --write --merge, check the profile, then install again with --force --replace\n", client)
	}
}

// writeEntry adds the gateway's entry to the client's file (data) and writes it, keeping a backup;
// it returns the backup's path and the names of the other servers.
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

// routerEntry runs this binary, with the profile the flags name and the configuration it found, as
// an absolute path: a client starts the gateway in a directory of its choosing.
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

// addRouter puts the entry under key in a client's JSON file, keeping every other field, and
// returns the new file and the other servers' names. An existing entry for the gateway is replaced
// only with force.
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

// clientServers reads a client's JSON file (comments allowed): its top object, and the object of
// servers under key.
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

// keepServers removes from servers those rep replaces, and returns the names of the others; without
// force, an entry that runs the gateway already is an error.
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
func (e *env) installReport(client, file, backup string, existed bool, entry routerEntry, rep replacement, env entryEnv) {
	w := e.stdout
	title := clients[client].title
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
}

// profilePath is the profiles.yaml the installed entry runs: --config, else $MCP_ROUTER_CONFIG,
// else the one in the user config directory ("" when that is unknown).
func (e *env) profilePath(places config.Places) string {
	if path := e.orEnv(e.configPath, "MCP_ROUTER_CONFIG"); path != "" || places.ConfigDir == "" {
		return path
	}
	return filepath.Join(places.ConfigDir, "mcp-router", "profiles.yaml")
}

// entryEnv is the "env" install writes into the gateway's entry: each variable the profile reads,
// as a reference the client expands or as the value the client file held in clear already. Claude
// Desktop expands nothing: a variable with no value there is left to set (missing).
type entryEnv struct {
	profile string   // the profile read; "" when there is none
	vars    []string // what it reads from the environment
	values  map[string]string
	inputs  []vscodeInput
	missing []string
	how     string // how the values were written, for the report
	why     string // why the missing ones were not
}

// vscodeInput is an entry of VS Code's "inputs": a value it prompts for once and keeps.
type vscodeInput struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	Description string `json:"description"`
	Password    bool   `json:"password"`
}

// clientGives are the variables a client gives every server it starts (the MCP TypeScript SDK's
// default environment, on Unix and on Windows): install neither passes nor prompts for them.
var clientGives = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "APPDATA", "HOMEDRIVE", "HOMEPATH",
	"LOCALAPPDATA", "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"}

func (e *env) entryEnv(client, file string, clientData []byte, places config.Places) entryEnv {
	path := e.profilePath(places)
	data, err := os.ReadFile(path)
	if err != nil {
		return entryEnv{}
	}
	out := entryEnv{profile: path, vars: slices.DeleteFunc(config.EnvVars(data), func(v string) bool { return slices.Contains(clientGives, v) })}
	if len(out.vars) == 0 {
		return out
	}
	clear := map[string]string{}
	if clientData != nil {
		if cfg, err := config.Load(config.LoadOptions{Path: path, Getenv: e.getenv, Builtins: builtin.Names()}); err == nil {
			clear, _ = cfg.ClientValues(e.profile, client, file, places) // a file of no servers holds no values
		}
	}
	kept := routerEnv(clientData, config.ServersKey(client))
	if clear == nil {
		clear = map[string]string{}
	}
	maps.Copy(clear, kept) // what the person set in the gateway's entry wins
	out.values = map[string]string{}
	for _, v := range out.vars {
		ref, how := clientRef(client, v)
		switch val, ok := clear[v]; {
		case ok:
			out.values[v] = val // in this file in clear already
			out.how = addHow(out.how, "values this file held already")
		case ref != "":
			out.values[v] = ref
			out.how = addHow(out.how, how)
			if client == config.ClientVSCode {
				out.inputs = append(out.inputs, vscodeInput{Type: "promptString", ID: v, Description: v + " for mcp-router", Password: true})
			}
		default:
			out.missing = append(out.missing, v)
			out.why = "Claude Desktop does not expand variables, and this file holds no value for them"
		}
	}
	maps.Copy(out.values, kept) // nothing the entry had is dropped
	return out
}

// routerEnv is the "env" of the gateway's entry in a client's file, which an install with --force
// replaces.
func routerEnv(data []byte, key string) map[string]string {
	var entry struct {
		Env map[string]string `json:"env"`
	}
	// Another shape has no env to keep (addRouter says what is wrong).
	if _, servers, err := clientServers(data, key); err != nil || json.Unmarshal(servers[routerName], &entry) != nil {
		return nil
	}
	return entry.Env
}

// clientRef is how a client's entry refers to variable v so that the client fills it in, and how to
// say so; "" when it cannot.
func clientRef(client, v string) (ref, how string) {
	switch client {
	case config.ClientClaudeCode:
		return "${" + v + "}", "references Claude Code expands from its environment"
	case config.ClientCursor, config.ClientWindsurf:
		return "${env:" + v + "}", "references " + clients[client].title + " expands from its environment"
	case config.ClientVSCode:
		return "${input:" + v + "}", "inputs VS Code prompts for once and keeps"
	}
	return "", ""
}

func addHow(have, how string) string {
	switch {
	case have == "":
		return how
	case strings.Contains(have, how):
		return have
	}
	return have + "; " + how
}

// addInputs adds VS Code inputs to the file's "inputs", keeping those there (an input of the same
// id stays as it is).
func addInputs(top map[string]json.RawMessage, inputs []vscodeInput) error {
	if len(inputs) == 0 {
		return nil
	}
	var have []json.RawMessage
	if raw, ok := top["inputs"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &have); err != nil {
			return err
		}
	}
	var ids []string
	for _, raw := range have {
		var in struct{ ID string }
		_ = json.Unmarshal(raw, &in) // an input of another shape has no id to match
		ids = append(ids, in.ID)
	}
	for _, in := range inputs {
		if slices.Contains(ids, in.ID) {
			continue
		}
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		have = append(have, raw)
	}
	var err error
	top["inputs"], err = json.Marshal(have)
	return err
}

// replacement is what install --replace takes out of a client: the servers the profile runs, in the
// file's server map and its projects. The current project's own file is shared through its
// repository and left as it is: Claude Code turns its servers off for this user
// (disabledMcpjsonServers), the other clients are told which are left.
type replacement struct {
	moved []config.MovedServer
	// projectFile is the current project's file, when servers of it (projectServers) are ones the
	// profile runs.
	projectFile    string
	projectDir     string
	projectServers []string
	// off says projectServers are turned off in the user's file.
	off bool
}

// replacement loads the profile the entry will run and finds, in every scope of the client, the
// servers it runs already.
func (e *env) replacement(client, file string, places config.Places) (replacement, error) {
	path := e.profilePath(places)
	if path == "" {
		return replacement{}, fmt.Errorf("--replace: %w; pass --config", errNoHome)
	}
	if _, err := os.Stat(path); err != nil {
		return replacement{}, fmt.Errorf("--replace moves the servers the profile runs, and there is no %s: run mcp-router import %s --write first", path, client)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Getenv: e.getenv, Builtins: builtin.Names()})
	if err != nil {
		return replacement{}, err
	}
	var r replacement
	if _, err := os.Stat(file); err == nil { // no file yet: only the project's servers run beside the gateway
		if r.moved, err = cfg.Moved(e.profile, client, file, places); err != nil {
			return r, err
		}
	}
	project := config.ClientFiles(client, places)[0]
	if same(project, file) {
		return r, nil
	}
	if _, err := os.Stat(project); err != nil {
		return r, nil
	}
	inProject, err := cfg.Moved(e.profile, client, project, places)
	if err != nil {
		return r, err
	}
	for _, m := range inProject {
		r.projectServers = append(r.projectServers, m.Name)
	}
	if len(r.projectServers) > 0 {
		r.projectFile, r.projectDir = project, places.Dir
		r.off = client == config.ClientClaudeCode && filepath.Base(file) == ".claude.json"
	}
	return r, nil
}

// same reports whether a and b are one existing file.
func same(a, b string) bool {
	x, errA := os.Stat(a)
	y, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(x, y)
}

// removes reports whether the file's own server map loses name.
func (r replacement) removes(name string) bool {
	return slices.Contains(r.moved, config.MovedServer{Name: name})
}

// turnOff adds the project file's servers to the project's disabledMcpjsonServers, for this user.
func (r replacement) turnOff(projects map[string]map[string]json.RawMessage) {
	if projects[r.projectDir] == nil {
		projects[r.projectDir] = map[string]json.RawMessage{}
	}
	p := projects[r.projectDir]
	var off []string
	if raw, ok := p["disabledMcpjsonServers"]; ok {
		_ = json.Unmarshal(raw, &off) // another shape is replaced
	}
	for _, n := range r.projectServers {
		if !slices.Contains(off, n) {
			off = append(off, n)
		}
	}
	p["disabledMcpjsonServers"], _ = json.Marshal(off)
}

// applyProjects edits Claude Code's projects in the file: their moved servers go, and the project
// file's are turned off for this user.
func (r replacement) applyProjects(top map[string]json.RawMessage) error {
	byProject := map[string][]string{}
	for _, m := range r.moved {
		if m.Project != "" {
			byProject[m.Project] = append(byProject[m.Project], m.Name)
		}
	}
	if len(byProject) == 0 && !r.off {
		return nil
	}
	projects := map[string]map[string]json.RawMessage{}
	if raw, ok := top["projects"]; ok {
		if err := json.Unmarshal(raw, &projects); err != nil {
			return fmt.Errorf("projects: %w", err)
		}
	}
	for p, names := range byProject {
		raw, ok := projects[p]["mcpServers"]
		if !ok {
			continue
		}
		servers := map[string]json.RawMessage{}
		if err := json.Unmarshal(raw, &servers); err != nil {
			return fmt.Errorf("projects[%q]: mcpServers: %w", p, err)
		}
		for _, n := range names {
			delete(servers, n)
		}
		projects[p]["mcpServers"], _ = json.Marshal(servers) // values just decoded: valid JSON
	}
	if r.off {
		r.turnOff(projects)
	}
	var err error
	top["projects"], err = json.Marshal(projects)
	return err
}

// report says what --replace took out, and what it left and why.
func (r replacement) report(w io.Writer, file, title string) {
	var names []string
	for _, m := range r.moved {
		if m.Project != "" {
			names = append(names, fmt.Sprintf("%q (project %s)", m.Name, m.Project))
		} else {
			names = append(names, fmt.Sprintf("%q", m.Name))
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(w, "removed %d servers that now run behind the gateway: %s\n", len(names), strings.Join(names, ", "))
	}
	switch {
	case len(r.projectServers) == 0:
	case r.off:
		fmt.Fprintf(w, "turned off for you (disabledMcpjsonServers of project %s in %s) the servers of %s that the gateway runs: %s; "+
			"that file is the project's, shared through its repository, and stays as it is\n", r.projectDir, file, r.projectFile, quoteList(r.projectServers))
	default:
		fmt.Fprintf(w, "left %s's %s, which the gateway runs too: that file is the project's, shared through its repository; "+
			"remove them there if everyone on the project uses the gateway (%s runs them beside it until then)\n", r.projectFile, quoteList(r.projectServers), title)
	}
}
