package proxy

import (
	"net/url"
	"strconv"
	"strings"
)

// PinKey is the identity under which an upstream's tool pins (and their
// approvals) are kept: the server itself, not the local name a profile
// gives it, so that gateways and profiles sharing a state agree on it, two
// different servers under one name never block each other, and a renamed
// upstream keeps its pins (class 8 in docs/reliability.md). It is
//
//   - "builtin:NAME ARGS..." for a built-in server;
//   - "stdio:COMMAND ARGS..." for a child process, with " (in DIR)" when
//     it starts in a directory of its own;
//   - "url:URL" for a remote server, without the URL's user, password,
//     query and fragment (which may hold credentials).
//
// Arguments holding spaces or quotes are quoted.
func PinKey(cfg UpstreamConfig) string {
	switch cfg.Transport {
	case TransportBuiltin:
		return "builtin:" + commandLine(cfg.Builtin, cfg.Args)
	case TransportStdio:
		key := "stdio:" + commandLine(cfg.Command, cfg.Args)
		if cfg.Cwd != "" {
			key += " (in " + cfg.Cwd + ")"
		}
		return key
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return "url:" + cfg.URL[:strings.IndexAny(cfg.URL+"?#", "?#")]
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return "url:" + u.String()
}

// commandLine joins a command and its arguments, quoting those that hold
// spaces, quotes or nothing.
func commandLine(command string, args []string) string {
	parts := make([]string, 0, 1+len(args))
	for _, a := range append([]string{command}, args...) {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
