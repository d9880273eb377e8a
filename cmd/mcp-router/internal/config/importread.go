package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Places are the folders the clients' files are found from.
type Places struct {
	// Home is the user's home directory.
	Home string
	// ConfigDir is the user config directory (os.UserConfigDir).
	ConfigDir string
	// Dir is the project folder (the current directory), for project files.
	Dir string
}

// ClientFiles returns where client keeps its MCP servers: the project's file, then the user's.
func ClientFiles(client string, p Places) []string {
	switch client {
	case ClientClaudeDesktop:
		return []string{filepath.Join(p.ConfigDir, "Claude", "claude_desktop_config.json")}
	case ClientClaudeCode:
		return []string{filepath.Join(p.Dir, ".mcp.json"), filepath.Join(p.Home, ".claude.json")}
	case ClientCursor:
		return []string{filepath.Join(p.Dir, ".cursor", "mcp.json"), filepath.Join(p.Home, ".cursor", "mcp.json")}
	case ClientVSCode:
		return []string{filepath.Join(p.Dir, ".vscode", "mcp.json"), filepath.Join(p.ConfigDir, "Code", "User", "mcp.json")}
	case ClientWindsurf:
		return []string{filepath.Join(p.Home, ".codeium", "windsurf", "mcp_config.json")}
	}
	return nil
}

// UserFile is client's user-wide configuration file, the one that holds servers for every project.
func UserFile(client string, p Places) string {
	files := ClientFiles(client, p)
	if len(files) == 0 {
		return ""
	}
	return files[len(files)-1]
}

// ServersKey is the key of the server map in client's file.
func ServersKey(client string) string {
	if client == ClientVSCode {
		return "servers"
	}
	return "mcpServers"
}

func existing(paths []string) []string {
	return slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
		_, err := os.Stat(p)
		return err != nil
	})
}

// Bounds on what an import reads: Claude Code's ~/.claude.json grows to tens of megabytes.
const (
	MaxClientFile = 64 << 20
	maxEnvFile    = 1 << 20
)

// ReadClientFile reads a client's JSON file, refusing one over MaxClientFile.
func ReadClientFile(path string) ([]byte, error) { return readBounded(path, MaxClientFile) }

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d MiB; not a client configuration", path, limit>>20)
	}
	return data, nil
}

// readFile reads one client file and adds its servers.
func (r *importer) readFile(path string) error {
	data, err := ReadClientFile(path)
	if err != nil {
		return err
	}
	data, _ = JSONC(data)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	d := &dialect{r: r, client: r.opts.Client, file: path, home: r.opts.Places.Home, workspace: workspaceOf(path)}
	key := ServersKey(d.client)
	if raw, ok := top["mcp"]; ok && d.client == ClientVSCode { // settings.json keeps them under "mcp"
		top = nil
		if err := json.Unmarshal(raw, &top); err != nil {
			return fmt.Errorf("%s: mcp: want an object: %w", path, err)
		}
	}
	found := false
	if raw, ok := top[key]; ok {
		found = true
		if err := d.section(key, raw); err != nil {
			return err
		}
	}
	if raw, ok := top["projects"]; ok && d.client == ClientClaudeCode {
		n, err := d.projects(raw)
		if err != nil {
			return err
		}
		found = found || n > 0
	}
	if !found {
		return fmt.Errorf("%s: no %s key: is this a %s configuration?", path, key, d.client)
	}
	return nil
}

// workspaceOf is the project folder of a project file (.vscode/mcp.json, .cursor/mcp.json), or "".
func workspaceOf(path string) string {
	dir := filepath.Dir(path)
	if b := filepath.Base(dir); b == ".vscode" || b == ".cursor" {
		if abs, err := filepath.Abs(filepath.Dir(dir)); err == nil {
			return abs
		}
	}
	return ""
}

// dialect reads one file the way its client does.
type dialect struct {
	r         *importer
	client    string
	file      string
	home      string
	workspace string // "" when the file belongs to no project
	project   string // the Claude Code project whose servers are being read
}

// projects reads ~/.claude.json's projects.<path>.mcpServers.
func (d *dialect) projects(raw json.RawMessage) (int, error) {
	var projects map[string]struct {
		MCPServers json.RawMessage `json:"mcpServers"`
		// DisabledMCPJSON names the servers of the project's .mcp.json that the user turned down.
		DisabledMCPJSON []string `json:"disabledMcpjsonServers"`
	}
	if err := json.Unmarshal(raw, &projects); err != nil {
		return 0, fmt.Errorf("%s: projects: want an object of projects: %w", d.file, err)
	}
	n := 0
	for _, p := range slices.Sorted(maps.Keys(projects)) {
		for _, name := range projects[p].DisabledMCPJSON {
			d.r.mcpJSONOff = append(d.r.mcpJSONOff, mcpJSONServer{filepath.Join(p, ".mcp.json"), name, d.file})
		}
		if len(projects[p].MCPServers) == 0 {
			continue
		}
		n++
		d.project = p
		err := d.section(fmt.Sprintf("projects[%q].mcpServers", p), projects[p].MCPServers)
		d.project = ""
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (d *dialect) section(path string, raw json.RawMessage) error {
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil || servers == nil {
		return fmt.Errorf("%s: %s: want an object of servers by name", d.file, path)
	}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		s, err := d.server(path, name, servers[name])
		if err != nil {
			return err
		}
		if s == nil {
			continue
		}
		if err := d.r.add(s); err != nil {
			return fmt.Errorf("%s: %w", d.file, err)
		}
	}
	return nil
}

// knownFields are the entry fields Import understands, by client.
var knownFields = map[string][]string{
	ClientClaudeDesktop: {"command", "args", "env", "cwd", "url", "type", "headers", "disabled"},
	ClientClaudeCode:    {"command", "args", "env", "cwd", "url", "type", "headers", "disabled"},
	ClientCursor:        {"command", "args", "env", "envFile", "cwd", "url", "type", "headers", "disabled"},
	ClientVSCode:        {"command", "args", "env", "envFile", "cwd", "url", "type", "headers", "disabled"},
	ClientWindsurf:      {"command", "args", "env", "serverUrl", "url", "headers", "disabled", "disabledTools"},
}

// fields decodes one entry's fields, each error naming the file and key.
type fields struct {
	d    *dialect
	path string
	raw  map[string]json.RawMessage
	errs []error
}

func (f *fields) fail(key, want string) {
	f.errs = append(f.errs, fmt.Errorf("%s: %s.%s: want %s", f.d.file, f.path, key, want))
}

// field decodes the entry's key as a T; a value of another shape is an error that wants want.
func field[T any](f *fields, key, want string) (v T) {
	if raw, ok := f.raw[key]; ok && json.Unmarshal(raw, &v) != nil {
		f.fail(key, want)
	}
	return v
}

func (f *fields) str(key string) string {
	return f.d.vars(field[string](f, key, "a string"), f.path+"."+key)
}

func (f *fields) list(key string) []string {
	ss := field[[]string](f, key, "a list of strings")
	for i := range ss {
		ss[i] = f.d.vars(ss[i], fmt.Sprintf("%s.%s[%d]", f.path, key, i))
	}
	return ss
}

// strMap reads an object of strings; numbers and booleans are taken as their text, the way a
// child's environment receives them.
func (f *fields) strMap(key string) map[string]string {
	if _, ok := f.raw[key]; !ok {
		return nil
	}
	m := field[map[string]any](f, key, "an object of names to strings")
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = f.d.vars(v, f.path+"."+key+"."+k)
		case float64:
			out[k] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(v)
		default:
			f.fail(key+"."+k, "a string")
		}
	}
	return out
}

// server reads one entry; nil means it is left out.
func (d *dialect) server(section, name string, raw json.RawMessage) (*server, error) {
	path := section + "." + name
	f := &fields{d: d, path: path}
	if err := json.Unmarshal(raw, &f.raw); err != nil || f.raw == nil {
		return nil, fmt.Errorf("%s: %s: want an object with command or url", d.file, path)
	}
	s := &server{Name: name, Source: d.file + " " + path, Section: section, File: d.file, Project: d.project}
	notes := len(d.r.notes)
	typ := f.str("type")
	s.Command, s.Args, s.Cwd = strings.TrimSpace(f.str("command")), f.list("args"), f.str("cwd")
	s.Env, s.Headers = f.strMap("env"), f.strMap("headers")
	s.URL, s.Disabled = strings.TrimSpace(cmp.Or(f.str("url"), f.str("serverUrl"))), field[bool](f, "disabled", "true or false")
	s.Deny = field[[]string](f, "disabledTools", "a list of tool names")
	envFile := f.str("envFile")
	if err := errors.Join(f.errs...); err != nil {
		return nil, err
	}
	if unknown := unknownFields(f.raw, knownFields[d.client]); len(unknown) > 0 {
		d.r.note("%s: mcp-router has no equivalent of %s; left out", s.Source, strings.Join(unknown, ", "))
	}
	if RunsRouter(s.Command, s.Args) {
		d.r.notes = d.r.notes[:notes] // what its fields would need does not matter
		d.r.note("%s: left out: it runs mcp-router itself", s.Source)
		return nil, nil
	}
	if err := d.kind(s, typ); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", d.file, path, err)
	}
	if envFile != "" && s.Command != "" {
		d.envFile(s, envFile)
	}
	return s, nil
}

func unknownFields(raw map[string]json.RawMessage, known []string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(known, k) {
			out = append(out, strconv.Quote(k))
		}
	}
	return out
}

// kind checks that the entry is a local or a remote server and settles a remote one's transport.
func (d *dialect) kind(s *server, typ string) error {
	switch {
	case typ == "stdio" || (typ == "" && s.Command != "" && s.URL == ""):
		if s.Command == "" {
			return errors.New(`"type": "stdio" needs a command`)
		}
		if s.URL != "" {
			d.r.note("%s: a stdio server with a url; the url is left out", s.Source)
		}
		s.URL, s.Headers = "", nil
		return nil
	case typ == "" && s.Command != "":
		return errors.New(`has both command and url; say which with "type": "stdio", "http" or "sse"`)
	case s.URL == "":
		if typ == "" {
			return errors.New("has neither command nor url")
		}
		return fmt.Errorf(`"type": %q needs a url`, typ)
	}
	if s.Command != "" || len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
		d.r.note("%s: a remote server with command, args, env or cwd; those are left out", s.Source)
	}
	s.Command, s.Args, s.Env, s.Cwd = "", nil, nil, ""
	var err error
	if s.Transport, s.TransportWhy, err = transportOf(typ, s.URL); err != nil {
		return err
	}
	if !strings.Contains(s.URL, "${") { // a variable is checked once expanded
		if checkURL(s.URL) != nil { // not quoted: a URL may hold a key
			return errors.New("url: want an http:// or https:// URL with a host")
		}
	}
	return nil
}

// transportOf settles a remote server's transport: the client's type when it gives one, else sse
// for a URL path ending in /sse, else streamable HTTP. why says which, for a comment beside it.
func transportOf(typ, rawURL string) (transport, why string, err error) {
	switch typ {
	case "sse":
		return "sse", `"type": "sse" in the client`, nil
	case "http", "streamable-http", "streamableHttp", "streamable_http":
		return "streamable-http", fmt.Sprintf("%q in the client", "type: "+typ), nil
	case "":
	default:
		return "", "", fmt.Errorf(`"type": %q is not stdio, http or sse (mcp-router speaks those)`, typ)
	}
	u, err := url.Parse(rawURL)
	if err == nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
		return "sse", "inferred: the URL path ends in /sse", nil
	}
	return "streamable-http", "inferred: the URL path does not end in /sse", nil
}

// mcpJSONServer is a server of a project's .mcp.json that ~/.claude.json says is turned off.
type mcpJSONServer struct{ file, name, turnedOffIn string }

// turnOff marks the servers of a project's .mcp.json that Claude Code's ~/.claude.json lists in the
// project's disabledMcpjsonServers: the user turned them down, and they stay off.
func (r *importer) turnOff() {
	for _, off := range r.mcpJSONOff {
		for _, s := range r.servers {
			abs, err := filepath.Abs(s.File)
			if err == nil && abs == off.file && s.Name == off.name && s.Section == "mcpServers" && !s.Disabled {
				s.Disabled = true
				s.Comments = append(s.Comments, "turned off in "+off.turnedOffIn+" (disabledMcpjsonServers)")
			}
		}
	}
}
