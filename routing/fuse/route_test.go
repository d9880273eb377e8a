package fuse

import (
	"errors"
	"testing"
)

func TestParseRoute(t *testing.T) {
	tests := []struct {
		in   string
		want Route
	}{
		{"", RouteUnspecified},
		{"SIMPLE_TOOL", RouteSimple},
		{"complex_tool", RouteComplex},
		{" General_Chat ", RouteGeneralChat},
		{"exit", RouteExit},
	}
	for _, tt := range tests {
		got, err := ParseRoute(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseRoute(%q) = %q, %v; want %q, nil", tt.in, got, err, tt.want)
		}
	}
}

func TestParseRouteRejectsUnknown(t *testing.T) {
	got, err := ParseRoute("SIMPLE")
	if !errors.Is(err, ErrUnknownRoute) || got != "" {
		t.Errorf(`ParseRoute("SIMPLE") = %q, %v; want "", ErrUnknownRoute`, got, err)
	}
}
