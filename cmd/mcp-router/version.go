package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/routing"
)

func newVersionCmd(e *env) *cobra.Command {
	var licenses bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go version it was built from",
		Long: `Print the version: the one set at build time with -ldflags "-X main.version=...",
else the module version (a tagged "go install" sets it), then the VCS revision,
whether the tree had uncommitted changes ("modified") and the commit time, as
recorded by the Go toolchain. --licenses also prints the licence of the data
built into the binary: the router's word table is derived from WordNet 3.0.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			info, _ := debug.ReadBuildInfo()
			if _, err := fmt.Fprintln(e.stdout, buildVersion(version, info)); err != nil || !licenses {
				return err
			}
			notice := routing.WordNetLicense
			if i := strings.Index(notice, "WordNet Release 3.0"); i >= 0 {
				notice = notice[i:] // the licence itself, not the file's own preamble
			}
			_, err := fmt.Fprintf(e.stdout, "\nThe routing word table is derived from WordNet 3.0, under this licence:\n\n%s", notice)
			return err
		},
	}
	cmd.Flags().BoolVar(&licenses, "licenses", false, "also print the licence of the WordNet data built in")
	return cmd
}

// gatewayVersion is the version the gateway reports in serverInfo, the status registry and the
// console: as [moduleVersion] finds it.
func gatewayVersion() string {
	info, _ := debug.ReadBuildInfo()
	return moduleVersion(version, info)
}

// moduleVersion is ldflagsVersion unless it is the default "dev", else the main module's version
// from the build info, else "dev".
func moduleVersion(ldflagsVersion string, info *debug.BuildInfo) string {
	if ldflagsVersion != "dev" || info == nil {
		return ldflagsVersion
	}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		return mv
	}
	return ldflagsVersion
}

// buildVersion describes the build in one line, e.g. "mcp-router v1.4.0 (revision 1efce13a2b4c,
// modified, 2026-11-24T23:01:05Z; go1.26.8)"; info may be nil.
func buildVersion(ldflagsVersion string, info *debug.BuildInfo) string {
	v := moduleVersion(ldflagsVersion, info)
	if info == nil {
		return "mcp-router " + v
	}
	var details []string
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		details = append(details, "revision "+rev[:min(12, len(rev))])
	}
	if settings["vcs.modified"] == "true" {
		details = append(details, "modified")
	}
	if t := settings["vcs.time"]; t != "" {
		details = append(details, t)
	}
	out := "mcp-router " + v + " ("
	if len(details) > 0 {
		out += strings.Join(details, ", ") + "; "
	}
	return out + info.GoVersion + ")"
}
