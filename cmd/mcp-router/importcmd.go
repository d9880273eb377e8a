package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

func newImportCmd(e *env) *cobra.Command {
	imp := &cobra.Command{
		Use:   "import SOURCE",
		Short: "Print a profiles.yaml made from another client's MCP configuration",
	}
	imp.AddCommand(&cobra.Command{
		Use:   "claude-desktop [FILE]",
		Short: "Convert Claude Desktop's claude_desktop_config.json (mcpServers) to profiles.yaml",
		Long: `Read Claude Desktop's configuration (FILE, or its usual location) and print the
equivalent profiles.yaml on stdout: every server in mcpServers becomes an upstream
of the default profile. Then point Claude Desktop at mcp-router alone.`,
		Example: `  mcp-router import claude-desktop > profiles.yaml`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := config.DefaultClaudeDesktopPath()
			if len(args) == 1 {
				path = args[0]
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return fmt.Errorf("reading Claude Desktop config: %w", err)
			}
			out, err := config.ImportClaudeDesktop(data)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			_, err = e.stdout.Write(out)
			return err
		},
	})
	return imp
}
