package config

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"strings"
)

// envFile merges the variables of an envFile into the entry's env; the entry's own env wins.
func (d *dialect) envFile(s *server, path string) {
	if !filepath.IsAbs(path) && !strings.HasPrefix(path, "$") {
		path = filepath.Join(cmp.Or(d.workspace, filepath.Dir(d.file)), path)
	}
	vars, err := ReadEnvFile(path)
	if err != nil { // the error names the file
		d.r.note("%s: envFile: %v; its variables are not imported", s.Source, err)
		return
	}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	s.EnvFile = map[string]string{}
	for k, v := range vars {
		if _, set := s.Env[k]; !set {
			s.Env[k] = escapeVars(v)
			s.EnvFile[k] = path
		}
	}
	s.Comments = append(s.Comments, fmt.Sprintf("env includes what envFile %s sets", path))
}

// parseEnvFile reads dotenv KEY=VALUE lines: # comments, an optional "export ", optional quotes.
func parseEnvFile(data []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxEnvFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		k = strings.TrimSpace(k)
		if !ok || !validVarName(k) {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		} else if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		out[k] = v
	}
	return out
}

// vars translates the client's ${...} placeholders in s: ${VAR} for the environment, resolved
// folders, and $${ for anything else, with a note where the user must act.
func (d *dialect) vars(s, where string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		end := strings.IndexByte(s[i:], '}')
		switch {
		case !strings.HasPrefix(s[i:], "${"):
			b.WriteByte(s[i])
			i++
			continue
		case end < 0: // an unclosed ${ is text
			b.WriteString("$${")
			i += 2
			continue
		}
		expr := s[i+2 : i+end]
		b.WriteString(d.variable(expr, where))
		i += end + 1
	}
	return b.String()
}

func (d *dialect) variable(expr, where string) string {
	literal := "$${" + expr + "}"
	switch d.client {
	case ClientClaudeDesktop: // Claude Desktop passes ${ on as it is
		if name, _, _ := strings.Cut(expr, ":-"); validVarName(name) {
			d.r.note("%s %s: Claude Desktop passes ${%s} to the server as this very text, not a variable's value; kept so: "+
				"to read %s from the environment instead, write ${%s} in profiles.yaml", d.file, where, expr, name, expr)
		}
		return literal
	case ClientClaudeCode:
		name, _, _ := strings.Cut(expr, ":-")
		if validVarName(name) {
			return "${" + expr + "}" // the same syntax as profiles.yaml
		}
		return literal
	}
	kind, arg, _ := strings.Cut(expr, ":")
	switch {
	case kind == "env" && validVarName(arg):
		return "${" + arg + "}"
	case kind == "input" && d.client == ClientVSCode:
		v := envVarName(arg)
		d.r.note("%s %s: ${input:%s} is asked of the user by VS Code; put the value in the environment as %s (written as ${%s})", d.file, where, arg, v, v)
		return "${" + v + "}"
	case expr == "userHome" && d.home != "":
		return d.home
	case expr == "pathSeparator" || expr == "/":
		return string(filepath.Separator)
	case (expr == "workspaceFolder" || expr == "workspaceFolderBasename") && d.workspace != "":
		if expr == "workspaceFolder" {
			return d.workspace
		}
		return filepath.Base(d.workspace)
	}
	d.r.note("%s %s: ${%s} has no meaning outside %s; kept as the literal text (edit it in profiles.yaml)", d.file, where, expr, d.client)
	return literal
}

// envVarName makes an environment variable name of s: upper case, other characters as _.
func envVarName(s string) string {
	out := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		}
		return '_'
	}, s)
	if out == "" || (out[0] >= '0' && out[0] <= '9') {
		out = "_" + out
	}
	return out
}

// ReadEnvFile reads the KEY=VALUE lines of a dotenv file (# comments, an optional "export ", values
// optionally quoted), at most 1 MiB.
func ReadEnvFile(path string) (map[string]string, error) {
	data, err := readBounded(path, maxEnvFile)
	if err != nil {
		return nil, err
	}
	return parseEnvFile(data), nil
}
