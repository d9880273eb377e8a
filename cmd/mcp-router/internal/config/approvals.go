package config

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mcp-router/mcp-router/proxy/approval"
)

// rawApprovals is a profile's approvals section: which calls a person must approve before they go
// upstream.
type rawApprovals struct {
	Destructive        bool          `yaml:"destructive"`
	Tools              []string      `yaml:"tools"`
	WithoutElicitation string        `yaml:"without_elicitation"`
	Timeout            DurationValue `yaml:"timeout"`
}

// approvals checks a profile's approvals section (path names it) and returns it resolved: a glob
// path.Match cannot use, or a mode it does not know, is an error naming the key.
func (v *validator) approvals(path string, profile *yaml.Node, a rawApprovals) approval.Policy {
	node := valueNode(profile, "approvals")
	line := func(key string) int { return keyLine(node, key, keyLine(profile, "approvals", 1)) }
	p := approval.Policy{Destructive: a.Destructive, Tools: a.Tools, Timeout: time.Duration(a.Timeout)}
	for _, g := range a.Tools {
		if err := approval.CheckGlob(g); err != nil {
			v.errorf(line("tools"), path+".tools", "%v", err)
		}
	}
	mode, err := approval.ParseMode(a.WithoutElicitation)
	if err != nil {
		v.errorf(line("without_elicitation"), path+".without_elicitation", "%v", err)
	}
	p.WithoutElicitation = mode
	return p
}
