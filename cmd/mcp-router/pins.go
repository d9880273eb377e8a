package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/proxy/integrity"
)

func newPinsCmd(e *env) *cobra.Command {
	pins := &cobra.Command{
		Use:   "pins",
		Short: "List and approve pinned tool definitions (rug-pull protection)",
		Long: `mcp-router pins every upstream tool's definition (name, description, schemas,
annotations) the first time it sees it, in state_dir. When an upstream later
changes a pinned definition, the tool is hidden and its calls refused until you
approve the change; a tool quarantined for a poisoned-looking definition is
released the same way. A running gateway picks an approval up within seconds.`,
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the pinned tools and the changes waiting for approval",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, _, err := e.openPins()
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e, store.List())
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "UPSTREAM\tTOOL\tSTATE\tFIRST SEEN\tDESCRIPTION")
			for _, p := range store.List() {
				state := "pinned"
				switch {
				case p.Pending():
					state = "CHANGED, waiting for approval"
				case p.Approved():
					state = "approved"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Upstream, p.Tool, state, p.FirstSeen.Format("2006-01-02"), firstLine(p.DescriptionExcerpt, 50))
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	approve := &cobra.Command{
		Use:     "approve NAME...",
		Short:   "Approve a tool's changed (or quarantined) definition, by its exposed name",
		Example: `  mcp-router pins approve github_create_issue`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, resolve, err := e.openPins()
			if err != nil {
				return err
			}
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

// openPins opens the profile's pin store, with a resolver from exposed
// names to (upstream, own name) by the upstreams' prefixes.
func (e *env) openPins() (*integrity.Store, func(string) (string, string, bool), error) {
	cfg, prof, err := e.loadConfig()
	if err != nil {
		return nil, nil, err
	}
	store, err := integrity.Open(pinsDir(cfg))
	if err != nil {
		return nil, nil, err
	}
	resolve := func(name string) (string, string, bool) {
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
	return store, resolve, nil
}
