package main

// The Dockerfile, parsed and linted by BuildKit's own front end, then checked for what the image
// promises: a static binary, a default stage on scratch that runs it as non-root with serve --http,
// the state directory as a volume, a with-node stage, and base images without a registry host.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

// The build command the Dockerfile must run (scripts/deploycheck builds the same way).
const staticBuild = `CGO_ENABLED=0 go build -trimpath -ldflags "-s -w`

// defaultCmd is the image's command: the gateway on every interface.
var defaultCmd = []string{"serve", "--http", "0.0.0.0:8080"}

// CheckDockerfile parses data, the Dockerfile named file, and returns every problem found, joined.
func CheckDockerfile(file string, data []byte) error {
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	var errs []error
	for _, w := range res.Warnings {
		line := 0
		if w.Location != nil {
			line = w.Location.Start.Line
		}
		errs = append(errs, fmt.Errorf("%s:%d: %s", file, line, w.Short))
	}
	lint := linter.New(&linter.Config{Warn: func(rule, _, _, msg string, loc []parser.Range) {
		errs = append(errs, fmt.Errorf("%s:%d: %s: %s", file, lineOf(loc), rule, msg))
	}})
	stages, _, err := instructions.Parse(res.AST, lint)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("%s: %w", file, err))...)
	}
	if len(stages) == 0 {
		return errors.Join(append(errs, fmt.Errorf("%s: no stage", file))...)
	}
	for _, s := range stages {
		if host := registryHost(s.BaseName); host != "" {
			errs = append(errs, fmt.Errorf("%s:%d: FROM %s names the registry %s; name the image alone", file, lineOf(s.Location), s.BaseName, host))
		}
	}
	errs = append(errs, checkBuildStage(file, stages)...)
	errs = append(errs, checkRuntimeStage(file, &stages[len(stages)-1], true)...)
	i := slices.IndexFunc(stages, func(s instructions.Stage) bool { return s.Name == "with-node" })
	if i < 0 {
		errs = append(errs, fmt.Errorf("%s: no with-node stage, the image for npx-launched stdio upstreams", file))
	} else {
		errs = append(errs, checkRuntimeStage(file, &stages[i], false)...)
	}
	return errors.Join(errs...)
}

func lineOf(loc []parser.Range) int {
	if len(loc) == 0 {
		return 0
	}
	return loc[0].Start.Line
}

// registryHost is the registry host an image reference starts with, if any: a first path element
// with a dot or a port, or localhost.
func registryHost(ref string) string {
	first, _, ok := strings.Cut(ref, "/")
	if ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return ""
}

// checkBuildStage wants some stage to build the binary with cgo off.
func checkBuildStage(file string, stages []instructions.Stage) []error {
	for _, s := range stages {
		for _, c := range s.Commands {
			if r, ok := c.(*instructions.RunCommand); ok && strings.Contains(strings.Join(r.CmdLine, " "), staticBuild) {
				return nil
			}
		}
	}
	return []error{fmt.Errorf("%s: no stage runs %s...: the binary must be static", file, staticBuild)}
}

// checkRuntimeStage wants a stage that runs the gateway as non-root with serve --http by default,
// in exec form (scratch has no shell), with the state directory as a volume and the port exposed.
func checkRuntimeStage(file string, s *instructions.Stage, static bool) []error {
	var errs []error
	where := fmt.Sprintf("%s:%d: stage %s", file, lineOf(s.Location), cmp.Or(s.Name, "(last)"))
	if static && s.BaseName != "scratch" {
		errs = append(errs, fmt.Errorf("%s: FROM %s, want scratch: the default image holds the static binary alone", where, s.BaseName))
	}
	var user string
	var cmd, entry *instructions.ShellDependantCmdLine
	var volumes, ports []string
	for _, c := range s.Commands {
		switch c := c.(type) {
		case *instructions.UserCommand:
			user = c.User
		case *instructions.CmdCommand:
			cmd = &c.ShellDependantCmdLine
		case *instructions.EntrypointCommand:
			entry = &c.ShellDependantCmdLine
		case *instructions.VolumeCommand:
			volumes = append(volumes, c.Volumes...)
		case *instructions.ExposeCommand:
			ports = append(ports, c.Ports...)
		case *instructions.RunCommand:
			if static {
				errs = append(errs, fmt.Errorf("%s: RUN on scratch, which has no shell", where))
			}
		}
	}
	if u, _, _ := strings.Cut(user, ":"); u == "" || u == "0" || u == "root" {
		errs = append(errs, fmt.Errorf("%s: USER %q, want a non-root user", where, user))
	}
	switch {
	case entry == nil || entry.PrependShell || len(entry.CmdLine) != 1 || !strings.HasSuffix(entry.CmdLine[0], "/mcp-router"):
		errs = append(errs, fmt.Errorf("%s: want ENTRYPOINT [\".../mcp-router\"] in exec form", where))
	case cmd == nil || cmd.PrependShell || !slices.Equal(cmd.CmdLine, defaultCmd):
		errs = append(errs, fmt.Errorf("%s: want CMD %q in exec form", where, defaultCmd))
	}
	if !slices.Contains(volumes, writableDirs[1]) {
		errs = append(errs, fmt.Errorf("%s: VOLUME %q, want %s, the state directory", where, volumes, writableDirs[1]))
	}
	if !slices.Contains(ports, "8080") {
		errs = append(errs, fmt.Errorf("%s: EXPOSE %q, want 8080", where, ports))
	}
	return errs
}
