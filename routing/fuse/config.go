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

// setters decode one routing.fuse key each into a Policy.
var setters = map[string]func(p *Policy, v any) error{
	"max_tools":                 intField(func(p *Policy) *int { return &p.MaxTools }),
	"simple_max_primary":        intField(func(p *Policy) *int { return &p.SimpleMaxPrimary }),
	"complex_min_primary":       intField(func(p *Policy) *int { return &p.ComplexMinPrimary }),
	"require_user_facing":       boolField(func(p *Policy) *bool { return &p.RequireUserFacing }),
	"adopt_qr_when_needs_empty": boolField(func(p *Policy) *bool { return &p.AdoptQRWhenNeedsEmpty }),
	"prefer_exact_needs":        boolField(func(p *Policy) *bool { return &p.PreferExactNeeds }),
	"collapse_duplicates":       boolField(func(p *Policy) *bool { return &p.CollapseDuplicates }),
	"min_qr_score":              setMinScore,
	"order_policy":              setOrder,
	"allowed_capabilities":      setAllowed,
	"internal_tools":            setInternal,
}

// PolicyFromMap decodes the profile's routing.fuse section, as YAML or viper
// hands it over, on top of [DefaultPolicy], then validates the result.
// Keys are the snake_case YAML keys; an unknown key, a value of the wrong
// type or an invalid value is a [*FieldError] naming the key. All problems
// are reported at once, in key order.
func PolicyFromMap(m map[string]any) (Policy, error) {
	p := DefaultPolicy()
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(m)) {
		set, ok := setters[key]
		if !ok {
			errs = append(errs, &FieldError{Key: key, Err: ErrUnknownKey})
			continue
		}
		if err := set(&p, m[key]); err != nil {
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

func intField(field func(*Policy) *int) func(*Policy, any) error {
	return func(p *Policy, v any) (err error) {
		*field(p), err = toInt(v)
		return err
	}
}

func boolField(field func(*Policy) *bool) func(*Policy, any) error {
	return func(p *Policy, v any) (err error) {
		*field(p), err = toBool(v)
		return err
	}
}

func setMinScore(p *Policy, v any) (err error) {
	p.MinQRScore, err = toFloat(v)
	return err
}

// setOrder accepts any case; Validate rejects names that are not orders.
func setOrder(p *Policy, v any) error {
	s, ok := v.(string)
	if !ok {
		return typeError(v, "string")
	}
	p.Order = Order(strings.ToLower(strings.TrimSpace(s)))
	return nil
}

func setAllowed(p *Policy, v any) error {
	names, err := toolNameList(v)
	p.AllowedCapabilities = names
	return err
}

func setInternal(p *Policy, v any) error {
	names, err := toolNameList(v)
	p.InternalTools = names
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
