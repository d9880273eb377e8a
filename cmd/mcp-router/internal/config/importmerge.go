package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"
)

// Merge adds the servers of an import to the default profile of an existing profiles.yaml, whose
// comments, order and other keys stay, and returns the new file and notes for the user. A server
// the profile runs already is taken once; another of a name it has joins as <name>-<client>.
func Merge(existing []byte, imported *Imported, client string) ([]byte, []string, error) {
	var doc, in yaml.Node
	if err := yaml.Unmarshal(existing, &doc); err != nil {
		return nil, nil, fmt.Errorf("reading the existing profiles.yaml: %w", err)
	}
	if err := yaml.Unmarshal(imported.YAML, &in); err != nil {
		return nil, nil, err
	}
	ups, err := defaultUpstreams(&doc)
	if err != nil {
		return nil, nil, err
	}
	add := valueNode(valueNode(valueNode(in.Content[0], "profiles"), "default"), "upstreams")
	if add == nil {
		return nil, nil, errors.New("the import has no upstreams")
	}
	var notes []string
	for i := 0; i+1 < len(add.Content); i += 2 {
		key, val := add.Content[i], add.Content[i+1]
		name := key.Value
		have := valueNode(ups, name)
		switch alias := identicalIn(ups, val); {
		case have != nil && sameServer(have, val):
			notes = append(notes, fmt.Sprintf("%s: the profile has this server already; kept as it is", name))
			continue
		case alias != "":
			notes = append(notes, fmt.Sprintf("%s: the profile has this server already, as %q; kept as it is", name, alias))
			continue
		case have != nil:
			key.Value = freeName(name+"-"+client, func(n string) bool { return valueNode(ups, n) != nil })
			key.HeadComment = joinComment(key.HeadComment, fmt.Sprintf("%q in %s; the profile's %q is another server", name, client, name))
			notes = append(notes, fmt.Sprintf("%s: the profile's %q is another server; this one is imported as %q", name, name, key.Value))
		}
		ups.Content = append(ups.Content, key, val)
	}
	out, err := encodeYAML(new(bytes.Buffer), &doc)
	return out, notes, err
}

// defaultUpstreams is the upstreams mapping of the file's default profile, made when it is missing.
func defaultUpstreams(doc *yaml.Node) (*yaml.Node, error) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the existing profiles.yaml is not a mapping of settings")
	}
	root := doc.Content[0]
	profiles := child(root, "profiles")
	if profiles.Kind != yaml.MappingNode {
		return nil, errors.New("the existing profiles.yaml: profiles is not a mapping")
	}
	name := "default"
	if d := valueNode(root, "default_profile"); d != nil && d.Value != "" {
		name = d.Value
	} else if len(profiles.Content) == 2 {
		name = profiles.Content[0].Value
	}
	ups := child(child(profiles, name), "upstreams")
	if ups.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the existing profiles.yaml: profiles.%s.upstreams is not a mapping", name)
	}
	ups.Style = 0 // a flow mapping ({}) that grows is written as a block
	return ups, nil
}

// child is the value of key in mapping m, an empty mapping added when there is none or null.
func child(m *yaml.Node, key string) *yaml.Node {
	if v := valueNode(m, key); v != nil && v.Tag != "!!null" {
		return v
	} else if v != nil {
		*v = yaml.Node{Kind: yaml.MappingNode}
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, str(key), v)
	return v
}

// sameServer reports whether two upstream entries run one server: the same command, args, url,
// working directory, environment and headers (another token or file is another server).
func sameServer(a, b *yaml.Node) bool {
	type server struct {
		Command, URL, Cwd string
		Args              []string
		Env, Headers      map[string]string
	}
	var x, y server
	return a.Decode(&x) == nil && b.Decode(&y) == nil && reflect.DeepEqual(x, y)
}

// identicalIn is the name of an upstream of m that is the server v (a merge done twice, a
// server renamed by an earlier merge); "" when there is none.
func identicalIn(m, v *yaml.Node) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if sameServer(m.Content[i+1], v) {
			return m.Content[i].Value
		}
	}
	return ""
}

// freeName is name, or name-2, name-3…, whichever is not taken.
func freeName(name string, taken func(string) bool) string {
	free := name
	for i := 2; taken(free); i++ {
		free = fmt.Sprintf("%s-%d", name, i)
	}
	return free
}

func joinComment(have, add string) string {
	if have == "" {
		return add
	}
	return have + "\n" + add
}
