package main

import (
	"path/filepath"
	"strings"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// wireVar turns the routing trace on, as log.wire does.
const wireVar = "DEBUG_WIRE_LOG"

// dotEnvWire reports whether a .env file sets DEBUG_WIRE_LOG=true: the one
// beside the configuration file first, then the working directory's. The
// real environment wins: when it sets DEBUG_WIRE_LOG at all, .env is not
// read. Only this variable is taken from .env (configuration comes from
// where the person put it), and a .env that cannot be read sets nothing.
func dotEnvWire(getenv func(string) (string, bool), cfgFile string) bool {
	if _, set := getenv(wireVar); set {
		return false
	}
	dirs := []string{"."}
	if cfgFile != config.DefaultName {
		dirs = []string{filepath.Dir(cfgFile), "."}
	}
	for _, dir := range dirs {
		vars, err := config.ReadEnvFile(filepath.Join(dir, ".env"))
		if v, ok := vars[wireVar]; err == nil && ok {
			return strings.EqualFold(v, "true")
		}
	}
	return false
}
