package upstream

import (
	"os"
	"path/filepath"
	"testing"
)

// A failed start's stderr blames an npx install folder only when Node or
// npm says something is missing or in the way under <cache>/_npx/<hash>.
func TestBrokenNpxDirFromStderr(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
	}{
		{"node cannot find a module", "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/home/u/.npm/_npx/15b07286cbcc3329/node_modules/zod/index.js' imported from /x.js", "/home/u/.npm/_npx/15b07286cbcc3329"},
		{"node cannot find a package", "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/s/dist/index.js", "/home/u/.npm/_npx/ab12cd34ef56ab78"},
		{"a file URL", "  url: 'file:///tmp/c/_npx/15b07286cbcc3329/node_modules/zod/index.js' ERR_MODULE_NOT_FOUND", "/tmp/c/_npx/15b07286cbcc3329"},
		{"npm cannot rename", "npm error ENOTEMPTY: directory not empty, rename '/home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/zod' -> '/home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/.zod-Xy1'", "/home/u/.npm/_npx/ab12cd34ef56ab78"},
		{"missing, but not in an npx folder", "Error: Cannot find module '/home/u/app/server.js'", ""},
		{"an npx folder, nothing missing", "loading /home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/s/index.js", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := brokenNpxDir([]string{"some other line", tc.line}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Only a real folder named by a hex hash inside a folder named _npx is
// ever removed.
func TestRemoveNpxDirRemovesOnlyAnNpxFolder(t *testing.T) {
	root := t.TempDir()
	npx := filepath.Join(root, "_npx", "15b07286cbcc3329")
	other := filepath.Join(root, "home", "15b07286cbcc3329")
	named := filepath.Join(root, "_npx", "not-a-hash")
	for _, d := range []string{npx, other, named} {
		if err := os.MkdirAll(filepath.Join(d, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "_npx", "abcdef0123456789")
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	for _, refused := range []string{other, link, named, "_npx/15b07286cbcc3329", filepath.Join(root, "_npx", "0000000000000000")} {
		if err := removeNpxDir(refused); err == nil {
			t.Errorf("removeNpxDir(%s): removed, want refused", refused)
		}
	}
	if _, err := os.Stat(filepath.Join(other, "node_modules")); err != nil {
		t.Errorf("the folder a link pointed to: %v, want it kept", err)
	}
	if err := removeNpxDir(npx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(npx); !os.IsNotExist(err) {
		t.Errorf("the npx folder: %v, want it removed", err)
	}
}
