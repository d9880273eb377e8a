package fuse

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// setters point at the Policy field each routing.fuse key sets (the config
// package's TestReferenceListsEveryKey reads this table by name).
var setters = map[string]func(p *Policy) any{
	"max_tools":                 func(p *Policy) any { return &p.MaxTools },
	"simple_max_primary":        func(p *Policy) any { return &p.SimpleMaxPrimary },
	"complex_min_primary":       func(p *Policy) any { return &p.ComplexMinPrimary },
	"require_user_facing":       func(p *Policy) any { return &p.RequireUserFacing },
	"adopt_qr_when_needs_empty": func(p *Policy) any { return &p.AdoptQRWhenNeedsEmpty },
	"prefer_exact_needs":        func(p *Policy) any { return &p.PreferExactNeeds },
	"collapse_duplicates":       func(p *Policy) any { return &p.CollapseDuplicates },
	"min_qr_score":              func(p *Policy) any { return &p.MinQRScore },
	"order_policy":              func(p *Policy) any { return &p.Order },
	"allowed_capabilities":      func(p *Policy) any { return &p.AllowedCapabilities },
	"internal_tools":            func(p *Policy) any { return &p.InternalTools },
}

// PolicyFromMap decodes the profile's routing.fuse section on top of
// [DefaultPolicy] and validates it: each unknown key, wrong type or invalid
// value is a [*FieldError] naming the key, joined in key order.
func PolicyFromMap(m map[string]any) (Policy, error) {
	p := DefaultPolicy()
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(m)) {
		field, ok := setters[key]
		if !ok {
			errs = append(errs, &FieldError{Key: key, Err: ErrUnknownKey})
			continue
		}
		if err := set(field(&p), m[key]); err != nil {
			errs = append(errs, &FieldError{Key: key, Err: err})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Policy{}, err
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// set decodes v into the field it points at.
func set(field, v any) (err error) {
	switch f := field.(type) {
	case *int:
		*f, err = toInt(v)
	case *bool:
		*f, err = toBool(v)
	case *float64:
		*f, err = toFloat(v)
	case *[]string:
		*f, err = toolNameList(v)
	case *Order: // any case; Validate rejects names that are not orders
		s, ok := v.(string)
		if !ok {
			return typeError(v, "string")
		}
		*f = Order(strings.ToLower(strings.TrimSpace(s)))
	}
	return err
}

// toolNameList decodes a list of tool names; nil is none.
func toolNameList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return slices.Clone(v), nil
	case []any:
		names := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("[%d]: %w", i, typeError(e, "string"))
			}
			names[i] = s
		}
		return names, nil
	default:
		return nil, typeError(v, "list of tool names")
	}
}

// toInt takes what YAML decoders and viper produce for an integer: Go
// integers, integral floats and numeric strings (environment overrides).
func toInt(v any) (int, error) {
	switch v := v.(type) {
	case int:
		return v, nil
	case int64:
		return int(v), nil
	case uint64:
		if v > math.MaxInt {
			return 0, fmt.Errorf("%d is too large", v)
		}
		return int(v), nil
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > math.MaxInt32 {
			return 0, fmt.Errorf("got %v, want an integer", v)
		}
		return int(v), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("got %q, want an integer", v)
		}
		return n, nil
	}
	return 0, typeError(v, "integer")
}

func toFloat(v any) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case int:
		return float64(v), nil
	case int64:
		return float64(v), nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("got %q, want a number", v)
		}
		return f, nil
	}
	return 0, typeError(v, "number")
}

func toBool(v any) (bool, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return false, fmt.Errorf("got %q, want true or false", v)
		}
		return b, nil
	}
	return false, typeError(v, "true or false")
}

func typeError(v any, want string) error {
	return fmt.Errorf("got %T (%v), want %s", v, v, want)
}

// NeedsFromAny sanitises the tools the model says it needs: nil, a list of
// names, or a map of name to a truthy value (names come back sorted).
// Names are trimmed, blanks skipped; the error names the bad element.
func NeedsFromAny(v any) ([]string, error) {
	switch v := v.(type) {
	case nil, []string, []any:
		names, err := toolNameList(v)
		if err != nil {
			return nil, fmt.Errorf("needs%w", err) // needs[2]: ...
		}
		return cleanNames(names), nil
	case map[string]bool:
		return needsFromMap(v)
	case map[string]any:
		return needsFromMap(v)
	}
	return nil, fmt.Errorf("needs: %w", typeError(v, "list of names or map of name to bool"))
}

func needsFromMap[V any](m map[string]V) ([]string, error) {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(m)) {
		ok, err := truthy(m[name])
		if err != nil {
			return nil, fmt.Errorf("needs[%q]: %w", name, err)
		}
		if ok {
			names = append(names, name)
		}
	}
	return cleanNames(names), nil
}

// truthy reads a needs map value; a string that is not a boolean is an
// error, not Python's "non-empty means true".
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
