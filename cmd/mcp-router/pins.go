package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/internal/printable"
	"github.com/mcp-router/mcp-router/proxy"
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
	var hash string
	approve := &cobra.Command{
		Use:   "approve NAME... [--hash H]",
		Short: "Approve a tool's changed (or quarantined) definition, by its exposed name",
		Long: `Approve the definition pins list showed: with --hash (the hash pins list
printed), only that exact definition is approved, and a definition the
upstream changed again since is refused and shown again. Without --hash,
the definition printed here, with what the poisoning scan finds in it, is
the one approved.`,
		Example: `  mcp-router pins approve github_create_issue --hash 3f2a9c81d0e4b7a65c1d2e3f4a5b6c7d`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if hash != "" && len(args) > 1 {
				return fmt.Errorf("--hash names one definition: approve one tool at a time with it")
			}
			store, prof, err := e.openPins(cmd.Context())
			if err != nil {
				return err
			}
			for _, name := range args {
				if err := approvePin(e, store, prof, name, hash); err != nil {
					return err
				}
			}
			return nil
		},
	}
	approve.Flags().StringVar(&hash, "hash", "", "the hash of the definition to approve, as pins list prints it")
	pins.AddCommand(list, approve)
	return pins
}

// approvePin approves exactly one definition: hash's when set, else the one it prints with the
// poisoning scan's findings. A definition changed since is refused and shown again.
func approvePin(e *env, store *integrity.Store, prof config.Profile, name, hash string) error {
	resolve := resolver(store, prof)
	up, tool, ok := resolve(name)
	if !ok {
		return fmt.Errorf("approving %s: %w", printable.Line(name), integrity.ErrUnknownTool)
	}
	p, _ := store.Lookup(up, tool)
	shown := cmp.Or(hash, p.Shown())
	if hash == "" {
		printShown(e, prof, p)
	}
	err := store.ApproveShown(name, shown, resolve)
	if errors.Is(err, integrity.ErrNotShown) {
		if p, ok := store.Lookup(up, tool); ok {
			printShown(e, prof, p)
		}
	}
	if err != nil {
		return fmt.Errorf("approving %s: %w", printable.Line(name), err)
	}
	fmt.Fprintf(e.stdout, "approved %s (definition %s)\n", printable.Line(name), integrity.ShortHash(shown))
	return nil
}

// printShown prints the definition an approval of p approves, its hash, and the poisoning scan's
// findings in it.
func printShown(e *env, prof config.Profile, p integrity.Pin) {
	fmt.Fprintf(e.stdout, "%s on %s, definition %s:\n", printable.Line(p.Tool), printable.Line(pinOwner(prof, p.Upstream)), integrity.ShortHash(p.Shown()))
	text := cmp.Or(p.ShownContract(), p.PendingExcerpt, p.DescriptionExcerpt)
	for line := range strings.SplitSeq(text, "\n") {
		fmt.Fprintf(e.stdout, "    %s\n", printable.Line(line))
	}
	printFindings(e, "    ", integrity.ScanContract(text, nil))
}

// printFindings prints what the poisoning scan found, indented.
func printFindings(e *env, indent string, findings []integrity.Finding) {
	if len(findings) == 0 {
		fmt.Fprintf(e.stdout, "%sthe poisoning scan finds nothing in it\n", indent)
		return
	}
	fmt.Fprintf(e.stdout, "%sthe poisoning scan finds:\n", indent)
	for _, f := range findings {
		fmt.Fprintf(e.stdout, "%s  %s in %s: %s\n", indent, f.Kind, printable.Line(f.Field), printable.Line(f.Detail))
	}
}

// printPins prints the pins as a table, then each blocked tool with why and, for a changed
// contract, the approved description beside the new.
func printPins(e *env, pins []integrity.Pin, prof config.Profile) error {
	tw := newTable(e.stdout, "UPSTREAM\tTOOL\tSTATE\tFIRST SEEN\tDESCRIPTION")
	var blocked []integrity.Pin
	for _, p := range pins {
		if p.Pending() || p.Held != "" {
			blocked = append(blocked, p)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", printable.Line(pinOwner(prof, p.Upstream)), printable.Line(p.Tool), pinState(p),
			p.FirstSeen.Format("2006-01-02"), printable.Line(firstLine(p.DescriptionExcerpt, 50)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(blocked) == 0 {
		return nil
	}
	fmt.Fprintf(e.stdout, "\n%d blocked:\n", len(blocked))
	for _, p := range blocked {
		printBlocked(e, p, prof)
	}
	return nil
}

// pinState is the STATE column of a pin.
func pinState(p integrity.Pin) string {
	switch {
	case p.Pending():
		return "CHANGED, waiting for approval"
	case p.Held != "":
		return "HELD, waiting for approval"
	case p.Approved():
		return "approved"
	}
	return "pinned"
}

// printBlocked prints a blocked tool: why, the approved description beside the new for a changed
// contract, and how to approve it.
func printBlocked(e *env, p integrity.Pin, prof config.Profile) {
	name := printable.Line(exposedName(prof, p.Upstream, p.Tool))
	fmt.Fprintf(e.stdout, "  %s (%s on %s)\n", name, printable.Line(p.Tool), printable.Line(pinOwner(prof, p.Upstream)))
	if p.Pending() {
		fmt.Fprintf(e.stdout, "    definition changed on %s since it was approved\n", p.ChangedAt.Format("2006-01-02 15:04"))
		fmt.Fprintf(e.stdout, "    approved: %s\n", printable.Line(firstLine(p.DescriptionExcerpt, 100)))
		fmt.Fprintf(e.stdout, "    new:      %s\n", printable.Line(firstLine(p.PendingExcerpt, 100)))
	}
	if p.Held != "" {
		fmt.Fprintf(e.stdout, "    held back: %s\n", printable.Line(p.Held))
	}
	if p.ShownContract() != "" {
		printFindings(e, "    ", integrity.ScanContract(p.ShownContract(), nil))
	}
	fmt.Fprintf(e.stdout, "    approve with: mcp-router pins approve %s --hash %s\n", name, integrity.ShortHash(p.Shown()))
}

// exposedName is the name the profile exposes the tool pinned under key as.
func exposedName(prof config.Profile, key, tool string) string {
	if u, ok := upstreamOf(prof, key); ok {
		return u.Prefix + tool
	}
	return key + "_" + tool
}

// openPins opens the pin store of the state directory, for the profile.
func (e *env) openPins(ctx context.Context) (*integrity.Store, config.Profile, error) {
	_, prof, st, err := e.configState(ctx)
	if err != nil {
		return nil, prof, err
	}
	store, err := integrity.OpenStore(st.Pins())
	if err != nil {
		return nil, prof, err
	}
	return store, prof, nil
}

// resolver maps exposed names to (pin key, own name) by the profile's prefixes: the key is the
// upstream's server identity (proxy.PinKey) or, for pins no gateway has moved there yet, its name.
func resolver(store *integrity.Store, prof config.Profile) func(string) (string, string, bool) {
	return func(name string) (string, string, bool) {
		for _, u := range prof.Upstreams {
			for _, key := range []string{proxy.PinKey(u), u.Name} {
				own, ok := strings.CutPrefix(name, u.Prefix)
				if _, pinned := store.Lookup(key, own); ok && pinned {
					return key, own, true
				}
				// A default prefix is not added to tools that already carry it.
				if _, pinned := store.Lookup(key, name); ok && u.DefaultPrefix && pinned {
					return key, name, true
				}
			}
		}
		return "", "", false
	}
}

// upstreamOf is the profile's upstream whose pins are kept under key (its server identity, or its
// name for pins kept by an earlier version).
func upstreamOf(prof config.Profile, key string) (proxy.UpstreamConfig, bool) {
	for _, u := range prof.Upstreams {
		if proxy.PinKey(u) == key || u.Name == key {
			return u, true
		}
	}
	return proxy.UpstreamConfig{}, false
}

// pinOwner names the upstream of a pin key for people: the profile's upstream name, else the key
// itself (a server of another profile).
func pinOwner(prof config.Profile, key string) string {
	if u, ok := upstreamOf(prof, key); ok {
		return u.Name
	}
	return key
}
