package upstream

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Real stderr of failed starts: what doctor and status quote is the line
// that says what is wrong, not the tail.
func TestExplainingStderrQuotesTheErrorNotTheTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stderr string
		want   []string
		line   string // explainingLine's, when not want[0]
	}{{
		name: "node ESM missing package in a half-installed npx cache",
		stderr: `node:internal/modules/esm/resolve:283
    throw new ERR_MODULE_NOT_FOUND(
          ^

Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/c/_npx/15b07286cbcc3329/node_modules/zod/index.js' imported from /tmp/c/_npx/15b07286cbcc3329/node_modules/@modelcontextprotocol/server-memory/dist/index.js
    at finalizeResolution (node:internal/modules/esm/resolve:283:11)
    at moduleResolve (node:internal/modules/esm/resolve:952:10)
    at ModuleJob._link (node:internal/modules/esm/module_job:168:49) {
  code: 'ERR_MODULE_NOT_FOUND',
  url: 'file:///tmp/c/_npx/15b07286cbcc3329/node_modules/zod/index.js'
}

Node.js v20.20.2`,
		want: []string{"Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/c/_npx/15b07286cbcc3329/node_modules/zod/index.js' imported from /tmp/c/_npx/15b07286cbcc3329/node_modules/@modelcontextprotocol/server-memory/dist/index.js"},
	}, {
		name: "filesystem server given a folder that does not exist",
		stderr: `Warning: Cannot access directory /home/ada/no-such-dir, skipping
Error: None of the specified directories are accessible`,
		want: []string{"Warning: Cannot access directory /home/ada/no-such-dir, skipping", "Error: None of the specified directories are accessible"},
		line: "Error: None of the specified directories are accessible",
	}, {
		name: "python traceback",
		stderr: `Traceback (most recent call last):
  File "<string>", line 5, in <module>
  File "<string>", line 4, in main
ModuleNotFoundError: No module named 'mcp_server_nosuch'`,
		want: []string{"ModuleNotFoundError: No module named 'mcp_server_nosuch'"},
	}, {
		name: "python traceback of a custom exception",
		stderr: `Starting server
Traceback (most recent call last):
  File "/srv/app.py", line 9, in <module>
    raise SystemExit
mypkg.Boom: the token is missing`,
		want: []string{"mypkg.Boom: the token is missing"},
	}, {
		name: "go panic",
		stderr: `panic: assignment to entry in nil map

goroutine 1 [running]:
main.main()
	/tmp/gp/main.go:8 +0x65
exit status 2`,
		want: []string{"panic: assignment to entry in nil map"},
	}, {
		name: "npm cache error",
		stderr: `npm error code ENOTEMPTY
npm error syscall rename
npm error path /home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/zod
npm error dest /home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/.zod-Xy1
npm error errno -39
npm error ENOTEMPTY: directory not empty, rename '/home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/zod' -> '/home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/.zod-Xy1'
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2026-12-07T04_00_00_000Z-debug-0.log`,
		want: []string{"npm error ENOTEMPTY: directory not empty, rename '/home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/zod' -> '/home/u/.npm/_npx/ab12cd34ef56ab78/node_modules/.zod-Xy1'"},
	}, {
		name: "npx with no executable to run",
		stderr: `npm warn exec The following package was not found and will be installed: some-lib@1.0.0
npm error could not determine executable to run
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2026-12-07T04_00_00_000Z-debug-0.log`,
		want: []string{"npm error could not determine executable to run"},
	}, {
		name: "docker run with no daemon",
		stderr: `docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?
Run 'docker run --help' for more information`,
		want: []string{"docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"},
	}, {
		name: "docker run of an image that does not exist",
		stderr: `Unable to find image 'mcp/nosuch:latest' locally
docker: Error response from daemon: pull access denied for mcp/nosuch, repository does not exist or may require 'docker login'

Run 'docker run --help' for more information`,
		want: []string{"Unable to find image 'mcp/nosuch:latest' locally", "docker: Error response from daemon: pull access denied for mcp/nosuch, repository does not exist or may require 'docker login'"},
		line: "docker: Error response from daemon: pull access denied for mcp/nosuch, repository does not exist or may require 'docker login'",
	}, {
		name:   "no error in it: the tail",
		stderr: "one\ntwo\nthree\nfour\nfive\nsix",
		want:   []string{"two", "three", "four", "five", "six"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			lines := strings.Split(tc.stderr, "\n")
			if diff := cmp.Diff(tc.want, explainingStderr(lines)); diff != "" {
				t.Errorf("explainingStderr (-want +got):\n%s", diff)
			}
			want := tc.want[0]
			if tc.line != "" {
				want = tc.line
			}
			if got := explainingLine(lines); got != want && tc.name != "no error in it: the tail" {
				t.Errorf("explainingLine: got %q, want %q", got, want)
			}
		})
	}
}

// The one line quoted for a failed child is an error rather than a
// warning before it that names a problem too; among lines alike, the
// first.
func TestExplainingLinePrefersAnErrorToAWarning(t *testing.T) {
	for _, tc := range []struct{ name, stderr, want string }{
		{"git", "warning: unable to read /etc/gitconfig\nfatal: not a git repository (or any of the parent directories): .git",
			"fatal: not a git repository (or any of the parent directories): .git"},
		{"node error code", "(node:4242) Warning: could not load the optional module bufferutil\nError [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be of type string",
			"Error [ERR_INVALID_ARG_TYPE]: The \"path\" argument must be of type string"},
		{"node uncaught", "Warning: cannot access /srv/data\nUncaught TypeError: config.load is not a function", "Uncaught TypeError: config.load is not a function"},
		{"node inspected error", "Warning: no such file /srv/app.json, using defaults\n[Error: EACCES: permission denied, open '/srv/key.pem'] {",
			"[Error: EACCES: permission denied, open '/srv/key.pem'] {"},
		{"python logging", "WARNING:root: could not reach the index, using the cache\nERROR:root:the token is missing", "ERROR:root:the token is missing"},
		{"python traceback", "WARNING: unable to reach the index\nTraceback (most recent call last):\n  File \"/srv/app.py\", line 3, in <module>\nmypkg.Boom: the token is missing",
			"mypkg.Boom: the token is missing"},
		{"go panic", "warning: no such file /etc/app.conf\npanic: runtime error: invalid memory address or nil pointer dereference",
			"panic: runtime error: invalid memory address or nil pointer dereference"},
		{"npm", "Warning: could not read .npmrc\nnpm error 404 Not Found - GET the-registry/no-such-pkg - Not found", "npm error 404 Not Found - GET the-registry/no-such-pkg - Not found"},
		{"no error opening: the first match", "cannot access /srv/a\ncould not open /srv/b", "cannot access /srv/a"},
		{"an error after an error: the first", "Error: first\nError: second", "Error: first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := explainingLine(strings.Split(tc.stderr, "\n")); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
