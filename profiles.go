// Package mcprouter holds what the mcp-router binary ships with beyond its
// code: the default configuration, used when no profiles.yaml is found.
package mcprouter

import _ "embed"

// DefaultProfiles is the profiles.yaml at the root of the repository: the
// three built-in servers, so a fresh install works with nothing else.
//
//go:embed profiles.yaml
var DefaultProfiles []byte
