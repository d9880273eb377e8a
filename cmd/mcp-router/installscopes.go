package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// replacement is what install --replace takes out of a client, in every
// scope it has: the servers the profile runs in the file's server map and
// in its projects (Claude Code's projects.<path>.mcpServers), and those of
// the current project's own file (.mcp.json, .cursor/mcp.json), which is
// the project's, shared through its repository, and so is left as it is:
// Claude Code turns them off for this user (disabledMcpjsonServers), the
// other clients are told which are left.
type replacement struct {
	moved []config.MovedServer
	// projectFile is the current project's file, when servers of it
	// (projectServers) are ones the profile runs.
	projectFile    string
	projectDir     string
	projectServers []string
	// off says projectServers are turned off in the user's file.
	off bool
}

// replacement loads the profile the entry will run and finds, in every
// scope of the client, the servers it runs already.
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
	if r.moved, err = cfg.Moved(e.profile, client, file, places); err != nil {
		return r, err
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

func same(a, b string) bool {
	x, errA := os.Stat(a)
	y, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(x, y)
}

// removes reports whether the file's own server map loses name.
func (r replacement) removes(name string) bool {
	return slices.Contains(r.moved, config.MovedServer{Name: name})
}

// turnOff adds the project file's servers to the project's
// disabledMcpjsonServers, for this user.
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

// applyProjects edits Claude Code's projects in the file: their moved
// servers go, and the project file's are turned off for this user.
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
		if err := editJSON(projects[p], "mcpServers", func(servers map[string]json.RawMessage) {
			for _, n := range names {
				delete(servers, n)
			}
		}); err != nil {
			return fmt.Errorf("projects[%q]: %w", p, err)
		}
	}
	if r.off {
		r.turnOff(projects)
	}
	var err error
	top["projects"], err = json.Marshal(projects)
	return err
}

// editJSON edits the object under key of m in place.
func editJSON(m map[string]json.RawMessage, key string, edit func(map[string]json.RawMessage)) error {
	raw, ok := m[key]
	if !ok {
		return nil
	}
	obj := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	edit(obj)
	var err error
	m[key], err = json.Marshal(obj)
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
