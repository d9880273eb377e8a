package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DefaultClaudeDesktopPath is where Claude Desktop keeps its configuration
// on this platform (the user config directory's Claude folder).
func DefaultClaudeDesktopPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "claude_desktop_config.json"
	}
	return filepath.Join(dir, "Claude", "claude_desktop_config.json")
}

// claudeServer is one entry of Claude Desktop's mcpServers.
type claudeServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Type    string            `json:"type"`
	Headers map[string]string `json:"headers"`
}

var badNameChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// ImportClaudeDesktop turns Claude Desktop's configuration into an
// equivalent profiles.yaml: each server of mcpServers becomes an upstream
// of the default profile, under a name made safe for tool prefixes. An
// entry that runs mcp-router itself is left out, with a comment.
func ImportClaudeDesktop(data []byte) ([]byte, error) {
	var doc struct {
		MCPServers map[string]claudeServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a Claude Desktop configuration: %w", err)
	}
	if len(doc.MCPServers) == 0 {
		return nil, fmt.Errorf("no mcpServers to import")
	}
	ups := &yaml.Node{Kind: yaml.MappingNode}
	var notes []string
	used := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		s := doc.MCPServers[name]
		if isRouter(s) {
			notes = append(notes, fmt.Sprintf("# left out %q: it runs mcp-router itself", name))
			continue
		}
		safe := safeName(name, used)
		if safe != name {
			notes = append(notes, fmt.Sprintf("# %q is named %q here (tool names allow only letters, digits, _ . -)", name, safe))
		}
		node, err := upstreamNode(s)
		if err != nil {
			return nil, fmt.Errorf("mcpServers.%s: %w", name, err)
		}
		ups.Content = append(ups.Content, str(safe), node)
	}
	root := mapping("default_profile", str("default"),
		"profiles", mapping("default", mapping("upstreams", ups, "core_tools", &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle})))
	var buf bytes.Buffer
	buf.WriteString("# profiles.yaml for mcp-router, imported from Claude Desktop's mcpServers.\n")
	buf.WriteString("# Reference: README.md. Replace mcpServers in Claude Desktop with mcp-router alone.\n")
	for _, n := range notes {
		buf.WriteString(n + "\n")
	}
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

func isRouter(s claudeServer) bool {
	if filepath.Base(s.Command) == "mcp-router" {
		return true
	}
	return slices.ContainsFunc(s.Args, func(a string) bool { return strings.Contains(a, "mcp-router/cmd/mcp-router") })
}

func safeName(name string, used map[string]bool) string {
	safe := strings.Trim(badNameChars.ReplaceAllString(name, "-"), "-")
	if safe == "" {
		safe = "server"
	}
	if len(safe) > 40 {
		safe = safe[:40]
	}
	base := safe
	for i := 2; used[safe]; i++ {
		safe = fmt.Sprintf("%s-%d", base, i)
	}
	used[safe] = true
	return safe
}

func upstreamNode(s claudeServer) (*yaml.Node, error) {
	switch {
	case s.Command != "":
		n := mapping("command", str(s.Command))
		if len(s.Args) > 0 {
			n.Content = append(n.Content, str("args"), strList(s.Args))
		}
		if len(s.Env) > 0 {
			n.Content = append(n.Content, str("env"), strMap(s.Env))
		}
		return n, nil
	case s.URL != "":
		n := mapping("url", str(escapeVars(s.URL)))
		if s.Type == "sse" {
			n.Content = append(n.Content, str("transport"), str("sse"))
		}
		if len(s.Headers) > 0 {
			n.Content = append(n.Content, str("headers"), strMap(s.Headers))
		}
		return n, nil
	default:
		return nil, fmt.Errorf("has neither command nor url")
	}
}

// escapeVars keeps a literal ${ from being read as a variable.
func escapeVars(s string) string { return strings.ReplaceAll(s, "${", "$${") }

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func strList(ss []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range ss {
		n.Content = append(n.Content, str(escapeVars(s)))
	}
	return n
}

func strMap(m map[string]string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		n.Content = append(n.Content, str(k), str(escapeVars(m[k])))
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
