// Package mcprouter holds what the mcp-router binary ships with beyond its
// code: the default configuration, used when no profiles.yaml is found,
// and its own documentation, which the docs built-in searches when it is
// given no folder.
package mcprouter

import "embed"

// DefaultProfiles is the profiles.yaml at the root of the repository: the
// three built-in servers, so a fresh install works with nothing else.
//
//go:embed profiles.yaml
var DefaultProfiles []byte

// Docs is mcp-router's documentation: README.md and docs/*.md.
//
//go:embed README.md docs/*.md
var Docs embed.FS
