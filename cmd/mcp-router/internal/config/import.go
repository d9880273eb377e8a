package config

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// The clients whose MCP configuration Import reads and Install writes.
const (
	ClientClaudeDesktop = "claude-desktop"
	ClientClaudeCode    = "claude-code"
	ClientCursor        = "cursor"
	ClientVSCode        = "vscode"
	ClientWindsurf      = "windsurf"
)

// Clients lists the client names, in the order help texts show them.
var Clients = []string{ClientClaudeDesktop, ClientClaudeCode, ClientCursor, ClientVSCode, ClientWindsurf}

// ImportOptions says what Import reads and how it writes the profile.
type ImportOptions struct {
	// Client is one of Clients.
	Client string
	// Files are the client's files to read, in order (an earlier file keeps a name a later one
	// repeats); empty reads those of ClientFiles that exist.
	Files []string
	// Places locates the default files and fills in ${userHome} and ${workspaceFolder}.
	Places Places
	// EnvRefs writes ${VAR} in place of each value that looks like a secret (default false: the
	// literal value is kept, and listed in Imported.Notes with the ${VAR} to use).
	EnvRefs bool
}

// Imported is what Import made.
type Imported struct {
	// YAML is the profiles.yaml.
	YAML []byte
	// Files are the files read.
	Files []string
	// Notes are warnings for the user (unknown fields, renamed servers, placeholders, values that
	// look like secrets). They never hold a value from the configuration, so they are safe to log.
	Notes []string
}

// maxImportServers bounds the servers one import takes.
const maxImportServers = 1000

// Import reads a client's MCP configuration and writes the equivalent profiles.yaml: each server
// becomes an upstream of the default profile, keeping its command, args, env, cwd, url, transport,
// headers and whether it is switched off. An entry that runs mcp-router itself is left out.
func Import(opts ImportOptions) (*Imported, error) {
	if !slices.Contains(Clients, opts.Client) {
		return nil, fmt.Errorf("unknown client %q (clients: %s)", opts.Client, strings.Join(Clients, ", "))
	}
	files := opts.Files
	if len(files) == 0 {
		files = existing(ClientFiles(opts.Client, opts.Places))
		if len(files) == 0 {
			return nil, fmt.Errorf("no %s configuration found (looked in %s); name the file", opts.Client,
				strings.Join(ClientFiles(opts.Client, opts.Places), ", "))
		}
	}
	r := &importer{opts: opts}
	for _, f := range files {
		if err := r.readFile(f); err != nil {
			return nil, err
		}
	}
	if len(r.servers) == 0 {
		return nil, fmt.Errorf("no MCP servers to import in %s", strings.Join(files, ", "))
	}
	r.turnOff()
	out, err := r.render(files)
	if err != nil {
		return nil, err
	}
	return &Imported{YAML: out, Files: files, Notes: r.notes}, nil
}

// server is one client entry, in mcp-router's terms.
type server struct {
	Name   string // the client's name for it
	Source string // file and key path, for messages
	// Section is the key of the server map it is in ("mcpServers", `projects["/p"].mcpServers`).
	Section string
	// Project is the Claude Code project (projects.<path>) it is in.
	Project string
	File    string // the file it is in
	// Command and the rest hold the values as profiles.yaml spells them: variables already
	// translated to ${VAR}.
	Command string
	Args    []string
	Env     map[string]string
	// EnvFile names, for each key of Env an envFile set, that file.
	EnvFile   map[string]string
	Cwd       string
	URL       string
	Transport string
	// TransportWhy says where Transport came from, for the YAML comment.
	TransportWhy string
	Headers      map[string]string
	Disabled     bool
	Deny         []string // tools the client turned off (Windsurf's disabledTools)
	// Comments go above the entry in the YAML.
	Comments []string
}

func (s *server) same(o *server) bool {
	return s.Command == o.Command && slices.Equal(s.Args, o.Args) && maps.Equal(s.Env, o.Env) &&
		s.Cwd == o.Cwd && s.URL == o.URL && s.Transport == o.Transport &&
		maps.Equal(s.Headers, o.Headers) && s.Disabled == o.Disabled && slices.Equal(s.Deny, o.Deny)
}

// importer gathers the servers of every file read.
type importer struct {
	opts    ImportOptions
	servers []*server
	byName  map[string]*server // the client's names
	used    map[string]bool    // names in profiles.yaml
	safe    map[*server]string // each server's name in profiles.yaml
	dups    []*server          // entries of a server taken once already
	notes   []string
	// mcpJSONOff are the project servers Claude Code turned off.
	mcpJSONOff []mcpJSONServer
}

func (r *importer) note(format string, args ...any) {
	r.notes = append(r.notes, printable(fmt.Sprintf(format, args...)))
}

// printable replaces the unprintable characters YAML comments and terminals must not get with ?.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// add takes one server, keeping names unique: a name seen before with the same definition is taken
// once; with another definition the newcomer is renamed.
func (r *importer) add(s *server) error {
	if r.byName == nil {
		r.byName, r.used, r.safe = map[string]*server{}, map[string]bool{}, map[*server]string{}
	}
	prev, clash := r.byName[s.Name]
	if clash && prev.same(s) {
		r.note("%s: the same server as %s, imported once", s.Source, prev.Source)
		r.dups = append(r.dups, s)
		r.safe[s] = r.safe[prev]
		return nil
	}
	if len(r.servers) >= maxImportServers {
		return fmt.Errorf("more than %d servers to import", maxImportServers)
	}
	safe := safeName(s.Name, r.used)
	switch {
	case clash:
		r.note("%s differs from %s of the same name: imported as %q (rename it in profiles.yaml if you like)", s.Source, prev.Source, safe)
		s.Comments = append(s.Comments, fmt.Sprintf("%q in the client; %s has another server of that name", s.Name, prev.Source))
	case safe != s.Name:
		r.byName[s.Name] = s
		s.Comments = append(s.Comments, fmt.Sprintf("%q in the client (upstream names allow only letters, digits, _ . -)", s.Name))
	default:
		r.byName[s.Name] = s
	}
	r.safe[s] = safe
	r.servers = append(r.servers, s)
	return nil
}

var badNameChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// safeName makes name a valid upstream name not in used, and marks it used.
func safeName(name string, used map[string]bool) string {
	safe := cmp.Or(strings.Trim(badNameChars.ReplaceAllString(name, "-"), "-"), "server")
	if len(safe) > 40 {
		safe = safe[:40]
	}
	safe = freeName(safe, func(n string) bool { return used[n] })
	used[safe] = true
	return safe
}

func (r *importer) render(files []string) ([]byte, error) {
	secrets := &secretRefs{envRefs: r.opts.EnvRefs, vars: map[string]string{}}
	ups := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range r.servers {
		name := r.safe[s]
		secrets.server(name, s)
		key := str(name)
		lines := []string{"from " + printable(s.Source)}
		for _, c := range s.Comments {
			lines = append(lines, printable(c))
		}
		key.HeadComment = strings.Join(lines, "\n")
		ups.Content = append(ups.Content, key, upstreamNode(s))
	}
	r.notes = append(r.notes, secrets.notes...)
	root := mapping("default_profile", str("default"),
		"profiles", mapping("default", mapping("upstreams", ups, "core_tools", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle})))
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# profiles.yaml for mcp-router, imported from %s (%s).\n", r.opts.Client, strings.Join(files, ", "))
	buf.WriteString("# Every key: docs/reference.md. Then run: mcp-router install " + r.opts.Client + "\n")
	return encodeYAML(&buf, root)
}

// encodeYAML appends v to buf as YAML indented by two, and returns buf's bytes.
func encodeYAML(buf *bytes.Buffer, v any) ([]byte, error) {
	enc := yaml.NewEncoder(buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func upstreamNode(s *server) *yaml.Node {
	var n *yaml.Node
	if s.Command != "" {
		n = mapping("command", str(s.Command))
		if len(s.Args) > 0 {
			n.Content = append(n.Content, str("args"), strList(s.Args))
		}
		if len(s.Env) > 0 {
			n.Content = append(n.Content, str("env"), strMap(s.Env))
		}
		if s.Cwd != "" {
			n.Content = append(n.Content, str("cwd"), str(s.Cwd))
		}
	} else {
		n = mapping("url", str(s.URL))
		t := str(s.Transport)
		t.LineComment = s.TransportWhy
		n.Content = append(n.Content, str("transport"), t)
		if len(s.Headers) > 0 {
			n.Content = append(n.Content, str("headers"), strMap(s.Headers))
		}
	}
	if len(s.Deny) > 0 {
		n.Content = append(n.Content, str("tools"), mapping("deny", strList(s.Deny)))
	}
	if s.Disabled {
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false", LineComment: `"disabled": true in the client`}
		n.Content = append(n.Content, str("enabled"), v)
	}
	return n
}

// escapeVars keeps a literal ${ from being read as a variable.
func escapeVars(s string) string { return strings.ReplaceAll(s, "${", "$${") }

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func strList(ss []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range ss {
		n.Content = append(n.Content, str(s))
	}
	return n
}

func strMap(m map[string]string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n.Content = append(n.Content, str(k), str(m[k]))
	}
	return n
}

func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, str(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return n
}

// RunsRouter reports whether a client's entry runs mcp-router itself.
func RunsRouter(command string, args []string) bool {
	base := strings.TrimSuffix(filepath.Base(command), ".exe")
	if base == "mcp-router" {
		return true
	}
	return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "mcp-router/cmd/mcp-router") })
}

// MovedServer is a server of a client's file that a profile runs already.
type MovedServer struct {
	Name string
	// Project is the Claude Code project (projects.<path>.mcpServers of ~/.claude.json) it is in;
	// "" for the file's own server map.
	Project string
}

// Moved returns the servers of a client's file (Claude Code's projects too) that a profile of c
// ("" the default) runs already (see runs): safe to remove once the client runs mcp-router.
func (c *Config) Moved(profile, client, file string, places Places) ([]MovedServer, error) {
	p, r, err := c.readClient(profile, client, file, places)
	if err != nil {
		return nil, err
	}
	var moved []MovedServer
	for _, s := range append(r.servers, r.dups...) {
		if (s.Section == ServersKey(client) || s.Project != "") &&
			slices.ContainsFunc(p.Value.Upstreams, func(u entry[rawUpstream]) bool { return runs(u, r.safe[s], s) }) {
			moved = append(moved, MovedServer{Name: s.Name, Project: s.Project})
		}
	}
	return moved, nil
}

// runs reports whether upstream u runs the client's server s: of the name import gives it (safe),
// the same command and args, or url; of another name, env and headers the same too.
func runs(u entry[rawUpstream], safe string, s *server) bool {
	v := u.Value
	sameCmd := v.Command != nil && *v.Command == s.Command && slices.Equal(v.Args, s.Args)
	sameURL := v.URL != nil && *v.URL == s.URL
	if u.Key == safe {
		return sameCmd || sameURL
	}
	return (sameCmd && maps.Equal(v.Env, s.Env)) || (sameURL && maps.Equal(v.Headers, s.Headers))
}

// envRef matches ${VAR} and ${VAR:-fallback} (and $${, a literal, so that EnvVars can skip it).
var envRef = regexp.MustCompile(`\$?\$\{([A-Za-z_][A-Za-z0-9_]*)(:-)?`)

// EnvVars lists the variables a profiles.yaml reads from the environment with no fallback, sorted:
// what must be set where mcp-router starts. An upstream switched off (enabled: false) reads none.
func EnvVars(data []byte) []string {
	seen := map[string]bool{}
	add := func(text string) {
		for _, m := range envRef.FindAllStringSubmatch(text, -1) {
			if m[0][1] != '$' && m[2] == "" { // not $${, no fallback
				seen[m[1]] = true
			}
		}
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		add(string(data)) // not YAML: every reference in the text
	}
	off := switchedOffUpstreams(&doc)
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n != nil && !off[n] {
			add(n.Value)
			for _, c := range n.Content {
				walk(c)
			}
			walk(n.Alias)
		}
	}
	walk(&doc)
	return slices.Sorted(maps.Keys(seen))
}

// switchedOffUpstreams are the entries of doc's upstreams with enabled: false.
func switchedOffUpstreams(doc *yaml.Node) map[*yaml.Node]bool {
	off := map[*yaml.Node]bool{}
	if len(doc.Content) != 1 || valueNode(doc.Content[0], "profiles") == nil {
		return off
	}
	for _, p := range valueNode(doc.Content[0], "profiles").Content {
		if ups := valueNode(p, "upstreams"); ups != nil {
			for _, u := range ups.Content {
				off[u] = switchedOff(u)
			}
		}
	}
	return off
}

// readClient is the raw profile and the servers of a client's file, for Moved and ClientValues.
func (c *Config) readClient(profile, client, file string, places Places) (entry[rawProfile], *importer, error) {
	p, err := c.rawProfile(profile)
	if err != nil {
		return p, nil, err
	}
	r := &importer{opts: ImportOptions{Client: client, Places: places}}
	return p, r, r.readFile(file)
}
