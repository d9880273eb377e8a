// Package prompts holds mcp-router's prompt templates, embedded in the
// binary. The planner renders decide.tmpl to ask a local chat model for a
// decision and a tool plan; a profile may name a file that replaces a
// template without rebuilding.
//
// A template is text/template source. Its top level is the system prompt;
// a template may define a "user" block for the user message.
package prompts

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"text/template"
)

//go:embed *.tmpl
var files embed.FS

const ext = ".tmpl"

// Get returns the text of the embedded template name ("decide" or
// "decide.tmpl"). An unknown name is an error wrapping [fs.ErrNotExist].
func Get(name string) (string, error) {
	base := strings.TrimSuffix(name, ext)
	if base == "" || path.Base(base) != base {
		return "", fmt.Errorf("prompt %q: %w", name, fs.ErrNotExist)
	}
	b, err := files.ReadFile(base + ext)
	if err != nil {
		return "", fmt.Errorf("prompt %q: %w", name, fs.ErrNotExist)
	}
	return string(b), nil
}

// Load parses the template name. When overridePath is set, the file there
// replaces the embedded template (name need not be embedded then); errors
// name the file. Executing the template fails on a missing map key rather
// than printing "<no value>".
func Load(name, overridePath string) (*template.Template, error) {
	if overridePath == "" {
		text, err := Get(name)
		if err != nil {
			return nil, err
		}
		return parse(name, text)
	}
	b, err := os.ReadFile(overridePath)
	if err != nil {
		return nil, fmt.Errorf("prompt %q override: %w", name, err)
	}
	t, err := parse(name, string(b))
	if err != nil {
		return nil, fmt.Errorf("prompt %q override %s: %w", name, overridePath, err)
	}
	return t, nil
}

func parse(name, text string) (*template.Template, error) {
	return template.New(strings.TrimSuffix(name, ext)).Option("missingkey=error").Parse(text)
}
