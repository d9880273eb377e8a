package config

import (
	"errors"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/proxy"
)

// brokenUpstream is an upstream entry left out for its own errors (a key misspelt, no command, a
// bad prefix): the rest of the file loads, and the profile lists it as disabled with its error.
type brokenUpstream struct {
	name string
	line int
	node *yaml.Node // the entry, for what it says of itself
	err  error
}

// disabled is the proxy's view of b, with the description, domain and prefix its entry gives.
func (b brokenUpstream) disabled() proxy.DisabledUpstream {
	scalar := func(key string) (string, bool) {
		n := valueNode(b.node, key)
		if n == nil || n.Kind != yaml.ScalarNode {
			return "", false
		}
		return n.Value, true
	}
	d := proxy.DisabledUpstream{Name: b.name, Prefix: b.name + "_", Err: b.err, Reason: "its entry in the configuration file is invalid"}
	d.Description, _ = scalar("description")
	d.Domain, _ = scalar("domain")
	if p, ok := scalar("prefix"); ok {
		d.Prefix = p
	}
	return d
}

// isolateUpstreams takes the upstream entries with wrong keys out of root and returns them by
// profile; one switched off (enabled: false) goes silently.
func isolateUpstreams(file string, root *yaml.Node) map[string][]brokenUpstream {
	out, profiles := map[string][]brokenUpstream{}, valueNode(root, "profiles")
	if profiles == nil || profiles.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(profiles.Content); i += 2 {
		name := profiles.Content[i].Value
		ups := valueNode(profiles.Content[i+1], "upstreams")
		if ups == nil || ups.Kind != yaml.MappingNode {
			continue
		}
		kept := make([]*yaml.Node, 0, len(ups.Content))
		for j := 0; j+1 < len(ups.Content); j += 2 {
			k, v := ups.Content[j], ups.Content[j+1]
			d := &decoder{validator{file: file}}
			d.check(v, reflect.TypeFor[rawUpstream](), "profiles."+name+".upstreams."+k.Value)
			if err := d.err(); err != nil {
				if !switchedOff(v) {
					out[name] = append(out[name], brokenUpstream{name: k.Value, line: k.Line, node: v, err: err})
				}
				continue
			}
			kept = append(kept, k, v)
		}
		ups.Content = kept
	}
	return out
}

func switchedOff(n *yaml.Node) bool {
	e := valueNode(n, "enabled")
	return e != nil && e.Kind == yaml.ScalarNode && e.Value == "false"
}

// validUpstreams validates each upstream of a profile on its own: those with errors join broken,
// the others are returned. Warnings go to v.
func (v *validator) validUpstreams(path string, ups ordered[rawUpstream], broken []brokenUpstream) (kept ordered[rawUpstream], _ []brokenUpstream) {
	for _, u := range ups {
		uv := &validator{file: v.file, builtins: v.builtins}
		uv.upstream(path+".upstreams."+u.Key, u)
		v.warnings = append(v.warnings, uv.warnings...)
		if err := errors.Join(uv.errs...); err != nil {
			if u.Value.Enabled == nil || *u.Value.Enabled {
				broken = append(broken, brokenUpstream{name: u.Key, line: u.Line, node: u.Node, err: err})
			}
			continue
		}
		kept = append(kept, u)
	}
	return kept, broken
}
