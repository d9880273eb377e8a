package main

import (
	"cmp"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	mcprouter "github.com/mcp-router/mcp-router"
	"github.com/mcp-router/mcp-router/builtin"
	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
)

// version is set at build time with -ldflags "-X main.version=..."; when it is not, the version
// command reports the module's (see buildVersion).
var version = "dev"

// env is what the commands get from the outside world.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)

	// set from flags
	configPath, profile, logLevel string

	// state, once a command opened it (runState, cliState); the command's caller closes it
	// (closeState)
	state stateStore
	// stateProblem, when runState fell back to memory, says why
	stateProblem string
}

func newRootCmd(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "mcp-router",
		Short: "One MCP server in front of many: a small, well-chosen belt of tools",
		Long: `mcp-router is an MCP gateway. Add it to your MCP client (Claude Desktop, Cursor, ...)
as its only server, list your real MCP servers in profiles.yaml, and the model
reaches all of their tools through it.

Configuration: --config FILE, else $MCP_ROUTER_CONFIG, else profiles.yaml in the
user config directory (mcp-router/ under it), else the built-in default profile
(calculator, web and docs servers built into this binary). A profiles.yaml in the
current directory is read only when named (--config ./profiles.yaml): a client
starts the gateway in a directory of its choosing, and configuration comes only
from where you put it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return e.checkLogLevel()
		},
	}
	root.PersistentFlags().StringVarP(&e.configPath, "config", "c", "", "profiles.yaml to use (env MCP_ROUTER_CONFIG)")
	root.PersistentFlags().StringVarP(&e.profile, "profile", "p", "", "profile to use (env MCP_ROUTER_PROFILE; default: the file's default_profile)")
	root.PersistentFlags().StringVar(&e.logLevel, "log-level", "", "debug, info, warn or error (overrides log.level and MCP_ROUTER_LOG_LEVEL)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		c.PrintErrln(c.UsageString())
		return &usageError{err}
	})
	root.AddCommand(newInstallCmd(e))
	root.AddCommand(newServeCmd(e), newToolsCmd(e), newCallCmd(e), newBuiltinCmd(e),
		newImportCmd(e), newVersionCmd(e), newConnectCmd(e), newRouteCmd(e), newEvalCmd(e), newRunCmd(e), newPlanCmd(e), newPinsCmd(e), newLessonsCmd(e), newStatusCmd(e), newDoctorCmd(e), newUICmd(e), newReloadCmd(e))
	root.AddCommand(newAuditCmd(e))
	root.AddCommand(newAuthCmd(e))
	return root
}

// loadConfig finds and reads the configuration the flags and environment name.
func (e *env) loadConfig() (*config.Config, config.Profile, error) {
	cfg, err := config.Load(config.LoadOptions{
		Path: e.orEnv(e.configPath, "MCP_ROUTER_CONFIG"), SearchDirs: searchDirs(), Default: mcprouter.DefaultProfiles,
		Getenv: e.getenv, Builtins: builtin.Names(),
	})
	if err != nil {
		return nil, config.Profile{}, err
	}
	cfg.Log.Wire = cfg.Log.Wire || dotEnvWire(e.getenv, cfg.File)
	p, err := cfg.Profile(e.orEnv(e.profile, "MCP_ROUTER_PROFILE"))
	return cfg, p, err
}

// orEnv is flag, else the environment's variable name.
func (e *env) orEnv(flag, name string) string {
	if flag == "" {
		flag, _ = e.getenv(name)
	}
	return flag
}

// searchDirs are where profiles.yaml is looked for when no file is named: the user config directory
// alone, never the working directory.
func searchDirs() []string {
	if d, err := os.UserConfigDir(); err == nil {
		return []string{filepath.Join(d, "mcp-router")}
	}
	return nil
}

// logConfigSource says which configuration serve read, and how to name a ./profiles.yaml that it
// did not.
func logConfigSource(cfg *config.Config, log *slog.Logger) {
	log.Info("config", "file", cfg.File)
	if here, err := os.Stat(localProfile); err != nil || here.IsDir() || same(localProfile, cfg.File) {
		return
	}
	log.Info("./profiles.yaml is not read unless named: pass --config ./profiles.yaml or set MCP_ROUTER_CONFIG", "read", cfg.File)
}

// localProfile is the working directory's profiles.yaml, which is never read unless named.
const localProfile = "profiles.yaml"

// logger builds the one log handler: tint on stderr, no colour unless stderr is a terminal.
func (e *env) logger(cfg *config.Config) *slog.Logger {
	return newLogger(e.stderr, cmp.Or(e.logLevel, cfg.Log.Level))
}

// wireVar turns the routing trace on, as log.wire does.
const wireVar = "DEBUG_WIRE_LOG"

// dotEnvWire reports whether a .env file (beside the configuration file, then the working
// directory's) sets DEBUG_WIRE_LOG=true. The real environment wins, and only this variable is taken
// from .env.
func dotEnvWire(getenv func(string) (string, bool), cfgFile string) bool {
	if _, set := getenv(wireVar); set {
		return false
	}
	dirs := []string{"."}
	if cfgFile != config.DefaultName {
		dirs = []string{filepath.Dir(cfgFile), "."}
	}
	for _, dir := range dirs {
		vars, err := config.ReadEnvFile(filepath.Join(dir, ".env"))
		if v, ok := vars[wireVar]; err == nil && ok {
			return strings.EqualFold(v, "true")
		}
	}
	return false
}
