//go:build race

package proxy

// The race detector keeps shadow memory for all memory touched, so RSS
// says nothing about the proxy's own use under it.
func init() { raceEnabled = true }
