package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/proxy/integrity"
)

func newPinsCmd(e *env) *cobra.Command {
	pins := &cobra.Command{
		Use:   "pins",
		Short: "List and approve pinned tool definitions (rug-pull protection)",
		Long: `mcp-router pins every upstream tool's definition (name, description, schemas,
annotations) the first time it sees it, in state_dir. When an upstream later
changes a pinned definition, the tool is hidden and its calls refused until you
approve the change; a tool quarantined for a poisoned-looking definition (or for
shadowing another server's tool) is released the same way. Every running gateway
using the same state_dir (or the same state.url database) picks an approval up
within seconds.`,
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the pinned tools, and every blocked tool with why",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, prof, err := e.openPins(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e, store.List())
			}
			return printPins(e, store.List(), prof)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	approve := &cobra.Command{
		Use:     "approve NAME...",
		Short:   "Approve a tool's changed (or quarantined) definition, by its exposed name",
		Example: `  mcp-router pins approve github_create_issue`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, prof, err := e.openPins(cmd.Context())
			if err != nil {
				return err
			}
			resolve := resolver(store, prof)
			for _, name := range args {
				if err := store.ApproveByName(name, resolve); err != nil {
					return fmt.Errorf("approving %s: %w", name, err)
				}
				fmt.Fprintf(e.stdout, "approved %s\n", name)
			}
			return nil
		},
	}
	pins.AddCommand(list, approve)
	return pins
}

// printPins prints the pins as a table, then each blocked tool with why
// and, for a changed contract, the approved description beside the new.
func printPins(e *env, pins []integrity.Pin, prof config.Profile) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "UPSTREAM\tTOOL\tSTATE\tFIRST SEEN\tDESCRIPTION")
	var blocked []integrity.Pin
	for _, p := range pins {
		state := "pinned"
		switch {
		case p.Pending():
			state = "CHANGED, waiting for approval"
		case p.Held != "":
			state = "HELD, waiting for approval"
		case p.Approved():
			state = "approved"
		}
		if p.Pending() || p.Held != "" {
			blocked = append(blocked, p)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Upstream, p.Tool, state, p.FirstSeen.Format("2006-01-02"), firstLine(p.DescriptionExcerpt, 50))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(blocked) == 0 {
		return nil
	}
	fmt.Fprintf(e.stdout, "\n%d blocked:\n", len(blocked))
	for _, p := range blocked {
		name := exposedName(prof, p.Upstream, p.Tool)
		fmt.Fprintf(e.stdout, "  %s (%s on %s)\n", name, p.Tool, p.Upstream)
		if p.Pending() {
			fmt.Fprintf(e.stdout, "    definition changed on %s since it was approved\n", p.ChangedAt.Format("2006-01-02 15:04"))
			fmt.Fprintf(e.stdout, "    approved: %s\n", firstLine(p.DescriptionExcerpt, 100))
			fmt.Fprintf(e.stdout, "    new:      %s\n", firstLine(p.PendingExcerpt, 100))
		}
		if p.Held != "" {
			fmt.Fprintf(e.stdout, "    held back: %s\n", p.Held)
		}
		fmt.Fprintf(e.stdout, "    approve with: mcp-router pins approve %s\n", name)
	}
	return nil
}

// exposedName is the name the profile exposes upstream's tool under.
func exposedName(prof config.Profile, upstream, tool string) string {
	for _, u := range prof.Upstreams {
		if u.Name == upstream {
			return u.Prefix + tool
		}
	}
	return upstream + "_" + tool
}

// openPins opens the pin store of the state directory, for the profile.
func (e *env) openPins(ctx context.Context) (*integrity.Store, config.Profile, error) {
	cfg, prof, err := e.loadConfig()
	if err != nil {
		return nil, prof, err
	}
	st, err := e.cliState(ctx, cfg)
	if err != nil {
		return nil, prof, err
	}
	store, err := integrity.OpenStore(st.Pins())
	if err != nil {
		return nil, prof, err
	}
	return store, prof, nil
}

// resolver maps exposed names to (upstream, own name) by the profile's
// prefixes.
func resolver(store *integrity.Store, prof config.Profile) func(string) (string, string, bool) {
	return func(name string) (string, string, bool) {
		for _, u := range prof.Upstreams {
			own, ok := strings.CutPrefix(name, u.Prefix)
			if _, pinned := store.Lookup(u.Name, own); ok && pinned {
				return u.Name, own, true
			}
			// A default prefix is not added to tools that already carry it.
			if _, pinned := store.Lookup(u.Name, name); ok && u.DefaultPrefix && pinned {
				return u.Name, name, true
			}
		}
		return "", "", false
	}
}
