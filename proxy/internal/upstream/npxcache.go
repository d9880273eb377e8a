package upstream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// An `npx -y` install cut short can leave <cache>/_npx/<hash>
// half-installed, and every later start then fails the same way. The
// folder is only a cache: the upstream removes it once on its own (see
// Upstream.npxRepair) and otherwise says which folder to remove.

// npxBroken matches what a half-installed npx folder makes Node or npm say.
var npxBroken = regexp.MustCompile(`Cannot find (package|module)|ERR_MODULE_NOT_FOUND|ENOTEMPTY|EEXIST`)

// npxDir matches an npx install folder in a path: <cache>/_npx/<hash>.
var npxDir = regexp.MustCompile(`((?:[A-Za-z]:)?[^\s'"]*?[/\\]_npx[/\\][0-9a-f]{8,64})(?:[/\\'"\s]|$)`)

// npxHash matches the name of an npx install folder.
var npxHash = regexp.MustCompile(`^[0-9a-f]{8,64}$`)

// brokenNpxDir returns the npx install folder a failed start's stderr
// blames, or "" when it blames none.
func brokenNpxDir(stderr []string) string {
	for _, l := range stderr {
		if !npxBroken.MatchString(l) {
			continue
		}
		if m := npxDir.FindStringSubmatch(l); m != nil {
			return strings.TrimPrefix(m[1], "file://")
		}
	}
	return ""
}

// removeNpxDir removes dir, named in a child's stderr, after checking that
// it is an npx install folder: an absolute path to a real folder (not a
// link) named by a hex hash inside a folder named _npx.
func removeNpxDir(dir string) error {
	clean := filepath.Clean(dir)
	if !filepath.IsAbs(clean) || filepath.Base(filepath.Dir(clean)) != "_npx" || !npxHash.MatchString(filepath.Base(clean)) {
		return fmt.Errorf("%s is not an npx install folder", dir)
	}
	if real, err := filepath.EvalSymlinks(clean); err != nil || real != clean {
		return fmt.Errorf("%s is not an npx install folder (a link, or gone)", dir)
	}
	info, err := os.Lstat(clean)
	if err != nil || !info.IsDir() {
		return fmt.Errorf("%s is not an npx install folder", dir)
	}
	return os.RemoveAll(clean)
}

// npxCacheError is a start that failed in a half-installed npx folder.
type npxCacheError struct {
	dir     string
	cleared bool // the folder was removed, for a clean retry
	err     error
}

func (e *npxCacheError) Error() string {
	if e.cleared {
		return fmt.Sprintf("%v: npx's install folder %s was half-installed; removed it, the next start installs afresh", e.err, e.dir)
	}
	return fmt.Sprintf("%v: npx's install folder %s looks half-installed: remove it with `rm -rf %s` and start again", e.err, e.dir, e.dir)
}

func (e *npxCacheError) Unwrap() error { return e.err }

// npxRepair explains err, a start that failed with stderr, when that
// blames a half-installed npx folder, and removes the folder the first
// time this upstream meets it; otherwise it returns err.
func (u *Upstream) npxRepair(err error, stderr []string) error {
	dir := brokenNpxDir(stderr)
	if dir == "" || u.cfg.Transport != TransportStdio {
		return err
	}
	out := &npxCacheError{dir: dir, err: err}
	u.mu.Lock()
	first := !u.npxCleared[dir]
	u.npxCleared[dir] = true
	u.mu.Unlock()
	if first {
		if rmErr := removeNpxDir(dir); rmErr != nil {
			u.logger.Warn("removing a half-installed npx folder", "dir", dir, "err", rmErr)
		} else {
			out.cleared = true
			u.logger.Warn("removed a half-installed npx folder; the next start installs afresh", "dir", dir)
		}
	}
	return out
}

// repaired reports whether err is a start that failed in an npx folder
// now removed: the next attempt is the first that can succeed, so the
// upstream is still starting.
func repaired(err error) bool {
	var npx *npxCacheError
	return errors.As(err, &npx) && npx.cleared
}
