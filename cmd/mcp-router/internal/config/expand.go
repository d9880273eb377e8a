package config

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Where ${VAR} is expanded (* is any name or index). A "${" in any other string is refused at load
// (checkUnexpanded): left alone it would become, say, a literal password or a tool name.
var expandedKeys = []string{
	"http.bearer_tokens.*", "http.allowed_origins.*", "http.tokens.*.token",
	"http.oidc.issuer", "http.oidc.resource", "http.oidc.audience", "http.oidc.jwks_url", "http.session_key",
	"ollama.url", "ollama.embed_model", "ollama.chat_model", "state_dir", "state.url", "log.trace_file",
	"profiles.*.planner.prompt",
	"profiles.*.upstreams.*.command", "profiles.*.upstreams.*.args.*", "profiles.*.upstreams.*.env.*",
	"profiles.*.upstreams.*.cwd", "profiles.*.upstreams.*.url", "profiles.*.upstreams.*.headers.*",
	"profiles.*.upstreams.*.auth.client_id", "profiles.*.upstreams.*.auth.client_secret",
	"profiles.*.upstreams.*.auth.client_metadata_url", "profiles.*.upstreams.*.auth.token_exchange.token_endpoint",
	"profiles.*.upstreams.*.auth.token_exchange.client_id", "profiles.*.upstreams.*.auth.token_exchange.client_secret",
}

func isExpanded(path []string) bool {
	return slices.ContainsFunc(expandedKeys, func(pat string) bool {
		return slices.EqualFunc(strings.Split(pat, "."), path, func(p, key string) bool { return p == "*" || p == key })
	})
}

// maxNodes bounds the values checkUnexpanded visits, aliases followed, so that a file of aliases of
// aliases cannot make it run for ever.
const maxNodes = 1 << 18

// checkUnexpanded reports every string holding "${" in a key where variables are not expanded.
func checkUnexpanded(file string, root *yaml.Node) error {
	var errs []error
	visits := 0
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		if visits++; len(path) > 64 || visits > maxNodes {
			return // deeper or larger than any configuration: refused below
		}
		switch n.Kind {
		case yaml.AliasNode: // checked where it is used, with that key
			walk(n.Alias, path)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], append(path[:len(path):len(path)], n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, append(path[:len(path):len(path)], strconv.Itoa(i)))
			}
		case yaml.ScalarNode:
			if strings.Contains(n.Value, "${") && !isExpanded(path) {
				errs = append(errs, fmt.Errorf("%s:%d: %s: %q holds \"${\", but variables are not expanded in this key (they are in: %s)",
					file, n.Line, dotted(path), n.Value, strings.Join(expandedKeys, ", ")))
			}
		}
	}
	walk(root, nil)
	if visits > maxNodes {
		errs = append(errs, fmt.Errorf("%s: more than %d values once aliases are followed; write the configuration out", file, maxNodes))
	}
	return errors.Join(errs...)
}

// dotted writes a key path as the messages do: a.b[0].c.
func dotted(path []string) string {
	var b strings.Builder
	for _, p := range path {
		if _, err := strconv.Atoi(p); err == nil && b.Len() > 0 {
			b.WriteString("[" + p + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// settingLine is the line of the value at path under root, else 1.
func settingLine(root *yaml.Node, path ...string) int {
	n, line := root, 1
	for _, key := range path {
		switch {
		case n == nil:
			return line
		case n.Kind == yaml.SequenceNode:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			line = keyLine(n, key, line)
			n = valueNode(n, key)
		}
	}
	return line
}

// expand expands ${VAR} in the http section and refuses an empty bearer token (the gateway would
// lack the password its file asks for). On error the lists stay empty, for Config.CheckHTTP.
func (h *HTTP) expand(file string, root *yaml.Node, getenv func(string) (string, bool)) error {
	var errs []error
	expandList := func(key string, in []string) []string {
		out := make([]string, 0, len(in))
		for i, s := range in {
			val, err := Expand(s, getenv)
			where := fmt.Sprintf("%s:%d: http.%s[%d]", file, settingLine(root, "http", key, strconv.Itoa(i)), key, i)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
			case key == "bearer_tokens" && strings.TrimSpace(val) == "":
				errs = append(errs, fmt.Errorf("%s: the token is empty (%q expanded to nothing); set the variable or remove the entry", where, s))
			}
			out = append(out, val)
		}
		return out
	}
	tokens := expandList("bearer_tokens", h.BearerTokens)
	origins := expandList("allowed_origins", h.AllowedOrigins)
	for i, o := range origins {
		err := checkOrigin(o)
		if err != nil && o != h.AllowedOrigins[i] { // named as written: an expanded value is not shown
			err = fmt.Errorf("%q, once its variables are expanded, is not an origin like https://app.example.com", h.AllowedOrigins[i])
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: http.allowed_origins[%d]: %w", file, settingLine(root, "http", "allowed_origins", strconv.Itoa(i)), i, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		h.BearerTokens, h.AllowedOrigins = nil, nil
		return err
	}
	h.BearerTokens, h.AllowedOrigins = tokens, origins
	return nil
}
