//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package integrity

// lockFile does nothing where flock is unavailable: the store is still
// safe within one process, but a pins CLI running beside the router may
// lose an approval to a concurrent write. Approve with the router stopped
// there.
func lockFile(string) (unlock func(), err error) { return func() {}, nil }

// syncDir does nothing: directories cannot be opened for syncing on every
// platform, and rename is already atomic.
func syncDir(string) error { return nil }
