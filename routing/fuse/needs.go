package fuse

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// NeedsFromAny sanitises the tools the model says it needs, as decoded from
// its JSON or YAML: nil, a list of names ([]string or []any of strings), or
// a map of name to a truthy value (map[string]bool or map[string]any of
// bools, numbers, nil, or strings strconv.ParseBool accepts). Names are
// trimmed and blank ones skipped; duplicates are left for [Fuse]. A map has
// no order, so its names come back sorted. The error names the bad element,
// as needs[2] or needs["name"].
func NeedsFromAny(v any) ([]string, error) {
	switch v := v.(type) {
	case nil, []string, []any:
		names, err := toolNameList(v)
		if err != nil {
			return nil, fmt.Errorf("needs%w", err) // needs[2]: ...
		}
		return cleanNames(names), nil
	case map[string]bool:
		return cleanNames(trueKeys(v)), nil
	case map[string]any:
		return needsFromMap(v)
	}
	return nil, fmt.Errorf("needs: %w", typeError(v, "list of names or map of name to bool"))
}

func needsFromMap(m map[string]any) ([]string, error) {
	wanted := make(map[string]bool, len(m))
	for name, v := range m {
		ok, err := truthy(v)
		if err != nil {
			return nil, fmt.Errorf("needs[%q]: %w", name, err)
		}
		wanted[name] = ok
	}
	return cleanNames(trueKeys(wanted)), nil
}

func trueKeys(m map[string]bool) []string {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if m[name] {
			names = append(names, name)
		}
	}
	return names
}

// truthy reads a needs map value the way a model means it; a string that is
// not a boolean is an error rather than Python's "non-empty means true".
func truthy(v any) (bool, error) {
	switch v := v.(type) {
	case nil:
		return false, nil
	case float64:
		return v != 0, nil
	case int:
		return v != 0, nil
	case int64:
		return v != 0, nil
	case bool, string:
		return toBool(v)
	}
	return false, typeError(v, "bool")
}

// cleanNames trims names and drops blank ones; nil when none remain.
func cleanNames(names []string) []string {
	var out []string
	for _, name := range names {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}
