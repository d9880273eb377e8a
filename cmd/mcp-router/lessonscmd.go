package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/routing/lessons"
)

func newLessonsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lessons",
		Short: "Inspect and undo what routing learned (from detours and routing_feedback)",
		Long: `Routing remembers lessons in state_dir: "for requests like Q, use (or avoid) tool T",
learned when a session needed several searches before a tool worked, or told through
the routing_feedback tool. Similar later requests are ranked with them. These commands
read and change that memory, shared by every gateway using the same state_dir (or the
same state.url database); running
gateways pick changes up within seconds.`,
	}
	var asJSON bool
	list := &cobra.Command{
		Use: "list [--json]", Short: "List the lessons", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withLessons(cmd.Context(), func(m *lessons.Memory) error {
				if asJSON {
					return printJSON(e, m.List())
				}
				tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tPOLARITY\tTOOL\tSOURCE\tUSES\tQUERY")
				for _, l := range m.List() {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\n", l.ID, l.Polarity, l.Tool, l.Source, l.Uses, firstLine(l.Query, 60))
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	forget := &cobra.Command{
		Use: "forget ID...", Short: "Forget lessons by id", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withLessons(cmd.Context(), func(m *lessons.Memory) error {
				for _, a := range args {
					id, err := strconv.ParseInt(a, 10, 64)
					if err != nil {
						return fmt.Errorf("%q is not a lesson id", a)
					}
					if err := m.Forget(cmd.Context(), id); err != nil {
						return fmt.Errorf("forgetting lesson %d: %w", id, err)
					}
					fmt.Fprintf(e.stdout, "forgot lesson %d\n", id)
				}
				return nil
			})
		},
	}
	clear := &cobra.Command{
		Use: "clear", Short: "Forget every lesson", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withLessons(cmd.Context(), func(m *lessons.Memory) error {
				n := m.Len()
				if err := m.Clear(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "forgot %d lessons\n", n)
				return nil
			})
		},
	}
	cmd.AddCommand(list, forget, clear)
	return cmd
}

// withLessons opens the experience memory of the state directory for fn.
func (e *env) withLessons(ctx context.Context, fn func(*lessons.Memory) error) error {
	cfg, _, st, err := e.configState(ctx)
	if err != nil {
		return err
	}
	mem, err := lessons.NewMemory(ctx, st.Lessons(), lessons.MemoryOptions{MaxBytes: cfg.Limits.LessonsBytes})
	if err != nil {
		return err
	}
	return fn(mem)
}
