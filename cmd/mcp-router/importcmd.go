package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// clients are the clients' names as people write them (title), and, for help texts, which files
// each keeps its servers in (where).
var clients = map[string]struct{ title, where string }{
	config.ClientClaudeDesktop: {"Claude Desktop", "claude_desktop_config.json (mcpServers) in the user config directory"},
	config.ClientClaudeCode:    {"Claude Code", "./.mcp.json, then ~/.claude.json (mcpServers and projects.<path>.mcpServers)"},
	config.ClientCursor:        {"Cursor", "./.cursor/mcp.json, then ~/.cursor/mcp.json (mcpServers)"},
	config.ClientVSCode:        {"VS Code", "./.vscode/mcp.json, then the user mcp.json of VS Code (servers)"},
	config.ClientWindsurf:      {"Windsurf", "~/.codeium/windsurf/mcp_config.json (mcpServers)"},
}

// errNoHome is the error when the user's folders are needed and unknown.
var errNoHome = errors.New("no home directory in the environment (HOME, or USERPROFILE and AppData on Windows)")

func (e *env) runImport(client string, files []string, f importFlags) error {
	places, err := e.places()
	if err != nil {
		return err
	}
	if (len(files) == 0 && places.Home == "") || (f.write && places.ConfigDir == "") {
		return fmt.Errorf("%w; name the file and leave out --write", errNoHome)
	}
	res, err := config.Import(config.ImportOptions{Client: client, Files: files, Places: places, EnvRefs: f.envRefs})
	if err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintln(e.stderr, "note:", n)
	}
	if !f.write {
		_, err = e.stdout.Write(res.YAML)
		return err
	}
	return e.writeImport(filepath.Join(places.ConfigDir, "mcp-router", "profiles.yaml"), res, client, f)
}

// writeImport writes the import to path: over an existing file with --force, into it with --merge
// (the old file is kept as a backup).
func (e *env) writeImport(path string, res *config.Imported, client string, f importFlags) error {
	if _, err := os.Stat(path); err == nil && !f.force && !f.merge {
		return fmt.Errorf("%s exists; pass --merge to add these servers to it, or --force to replace it (a backup is kept)", path)
	}
	data, force := res.YAML, f.force
	if f.merge {
		var err error
		if data, err = e.merged(path, res, client); err != nil {
			return err
		}
		force = true // the old file is kept as a backup
	}
	backup, err := replaceFile(path, data, 0o600, force)
	if err != nil {
		return err
	}
	if backup != "" {
		fmt.Fprintf(e.stdout, "backed up the old %s to %s\n", path, backup)
	}
	fmt.Fprintf(e.stdout, "wrote %s\nnext: mcp-router install %s, then restart %s\n", path, client, clients[client].title)
	return nil
}

// merged is the profiles.yaml at path with the import's servers added (config.Merge), or the import
// alone when there is no file yet.
func (e *env) merged(path string, res *config.Imported, client string) ([]byte, error) {
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return res.YAML, nil
	}
	if err != nil {
		return nil, err
	}
	data, notes, err := config.Merge(old, res, client)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, n := range notes {
		fmt.Fprintln(e.stderr, "note:", n)
	}
	return data, nil
}

// places locates the clients' files from the command's environment, as os.UserHomeDir and
// os.UserConfigDir do from the process's, so that the user config directory is the one the
// configuration is searched in.
func (e *env) places() (config.Places, error) {
	get := func(k string) string { v, _ := e.getenv(k); return v }
	var p config.Places
	switch runtime.GOOS {
	case "windows":
		p.Home, p.ConfigDir = get("USERPROFILE"), get("AppData")
	case "darwin", "ios":
		p.Home = get("HOME")
		if p.Home != "" {
			p.ConfigDir = filepath.Join(p.Home, "Library", "Application Support")
		}
	default:
		p.Home, p.ConfigDir = get("HOME"), get("XDG_CONFIG_HOME")
		if !filepath.IsAbs(p.ConfigDir) && p.Home != "" {
			p.ConfigDir = filepath.Join(p.Home, ".config")
		}
	}
	if !filepath.IsAbs(p.ConfigDir) {
		p.ConfigDir = ""
	}
	var err error
	if p.Dir, err = os.Getwd(); err != nil {
		return p, fmt.Errorf("finding the current directory: %w", err)
	}
	return p, nil
}

// replaceFile writes data to path through a temporary file and a rename. An existing file is
// replaced only with force, after a copy of it is kept as path.bak-<time>, whose name it returns.
func replaceFile(path string, data []byte, perm os.FileMode, force bool) (backup string, err error) {
	info, err := os.Stat(path)
	switch {
	case err == nil && !force:
		return "", fmt.Errorf("%s exists; pass --force to replace it (a backup is kept)", path)
	case err == nil:
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real // replace the file a link points to, not the link
		}
		if backup, err = backupFile(path, info.Mode().Perm()); err != nil {
			return "", err
		}
		perm = info.Mode().Perm()
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return backup, writeAtomic(path, data, perm)
}

func writeAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// backupFile copies path to path.bak-<UTC time> with perm, never over another backup.
func backupFile(path string, perm os.FileMode) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	for i := 1; ; i++ {
		name := path + ".bak-" + stamp
		if i > 1 {
			name = fmt.Sprintf("%s-%d", name, i)
		}
		out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, os.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
		if _, err := out.Write(data); err != nil {
			out.Close()
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
		return name, out.Close()
	}
}

// quoteList is names as "a", "b", "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// unknownClient is the error of import or install run with no client, or one they do not know
// (without it, cobra prints the help and exits 0).
func unknownClient(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("name a client: %s", strings.Join(config.Clients, ", "))
	}
	return fmt.Errorf("unknown client %q (clients: %s)", args[0], strings.Join(config.Clients, ", "))
}

type importFlags struct {
	write, force, merge, envRefs bool
}

func newImportCmd(e *env) *cobra.Command {
	imp := &cobra.Command{
		Use:   "import CLIENT [FILE...]",
		Short: "Make a profiles.yaml from the MCP servers of Claude Desktop, Claude Code, Cursor, VS Code or Windsurf",
		RunE:  func(_ *cobra.Command, args []string) error { return unknownClient(args) },
	}
	var f importFlags
	imp.PersistentFlags().BoolVar(&f.write, "write", false, "write profiles.yaml to the user config directory instead of stdout")
	imp.PersistentFlags().BoolVar(&f.force, "force", false, "with --write: replace an existing profiles.yaml (a backup is kept)")
	imp.PersistentFlags().BoolVar(&f.merge, "merge", false, "with --write: add the servers to the existing profiles.yaml, keeping what it has (a backup is kept)")
	imp.PersistentFlags().BoolVar(&f.envRefs, "env-refs", false, "write ${VAR} in place of values that look like secrets")
	for _, client := range config.Clients {
		title := clients[client].title
		imp.AddCommand(&cobra.Command{
			Use:   client + " [FILE...]",
			Short: "Convert " + title + "'s MCP servers to profiles.yaml",
			Long: fmt.Sprintf(`Read %s's MCP servers (FILE, else %s)
and print the equivalent profiles.yaml: every server becomes an upstream of the
default profile, with its command, args, env, cwd, url, transport, headers and
whether it is switched off. Values that look like secrets are listed on stderr
with the ${VAR} to use instead (--env-refs writes those references).

With --write --merge the servers join an existing profiles.yaml (a second
client's, say): a server of a name it has is taken once when it runs the same
command and args, or url, and otherwise joins as NAME-%s, with a note.

Run it before "mcp-router install %s", while the servers are still there.`, title, clients[client].where, client, client),
			Example: fmt.Sprintf("  mcp-router import %s --write\n  mcp-router import %s --write --merge\n  mcp-router import %s > profiles.yaml", client, client, client),
			RunE: func(cmd *cobra.Command, args []string) error {
				return e.runImport(client, args, f)
			},
		})
	}
	return imp
}
