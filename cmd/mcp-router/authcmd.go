package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcp-router/mcp-router/cmd/mcp-router/internal/config"
	"github.com/mcp-router/mcp-router/internal/printable"
	"github.com/mcp-router/mcp-router/proxy"
	"github.com/mcp-router/mcp-router/proxy/upstreamauth"
)

func newAuthCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Log in to remote upstreams that ask for OAuth authorization",
		Long: `Remote (HTTP) upstreams such as hosted MCP servers may answer 401 and ask for an OAuth
login. auth login runs the login once: it prints the authorization URL to open in a browser,
takes the redirect on a loopback address and stores the tokens, sealed with AES-GCM, in the
state (state.db or the state.url database). The key is $MCP_ROUTER_TOKEN_KEY (32 bytes, hex
or base64), else token.key in state_dir (made 0600 on first login). Gateways then send the
token on each request and refresh it when it expires.`,
	}
	cmd.AddCommand(newAuthLoginCmd(e), newAuthStatusCmd(e), newAuthLogoutCmd(e))
	return cmd
}

func newAuthLoginCmd(e *env) *cobra.Command {
	var wait time.Duration
	var principal string
	cmd := &cobra.Command{
		Use:   "login UPSTREAM",
		Short: "Log in to a remote upstream (prints the URL to open, waits for the redirect)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, u, vault, err := e.authUpstream(cmd.Context(), args[0], true)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), wait)
			defer cancel()
			rec, err := upstreamauth.Login(ctx, upstreamauth.LoginOptions{
				Upstream: u.Name, URL: u.URL, Principal: principal, Config: u.Auth, Vault: vault,
				Show: func(authURL string) {
					fmt.Fprintf(e.stdout, "Open this URL in a browser to log in to %s:\n\n  %s\n\nWaiting for the login (up to %s)...\n", printable.Line(u.Name), printable.Line(authURL), wait)
				},
			})
			if err != nil {
				return fmt.Errorf("%s: logging in to %s: %w", cfg.File, u.Name, err)
			}
			s := upstreamauth.Status{Upstream: u.Name, Principal: principal, LoggedIn: true, ExpiresAt: rec.Token.ExpiresAt, Refreshable: rec.Token.RefreshToken != ""}
			fmt.Fprintf(e.stdout, "%s: %s\n", printable.Line(u.Name), printable.Line(s.Words(time.Now())))
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "timeout", 5*time.Minute, "how long to wait for the login in the browser")
	cmd.Flags().StringVar(&principal, "for", "", "log in for one caller (its principal, such as token-0123456789ab) of an upstream with auth.per_user")
	return cmd
}

func newAuthStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	var principal string
	cmd := &cobra.Command{
		Use:   "status [--json]",
		Short: "Show each remote upstream's login: needs login, logged in until when, refreshable (never the tokens)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, prof, err := e.loadConfig()
			if err != nil {
				return err
			}
			vault, err := e.vault(cmd.Context(), cfg, false)
			if err != nil && !errors.Is(err, upstreamauth.ErrNoKey) {
				return err
			}
			out := []upstreamauth.Status{}
			for _, u := range remoteUpstreams(prof) {
				s := upstreamauth.Status{Upstream: u.Name, Principal: principal}
				if vault != nil {
					s = vault.StatusOf(cmd.Context(), u.Name, u.URL, principal)
				}
				out = append(out, s)
			}
			if asJSON {
				return printJSON(e, out)
			}
			if len(out) == 0 {
				fmt.Fprintf(e.stdout, "profile %s has no remote upstreams\n", prof.Name)
				return nil
			}
			tw := newTable(e.stdout, "UPSTREAM\tLOGIN")
			for i, s := range out {
				words := s.Words(time.Now())
				if !s.LoggedIn && hasAuthorizationHeader(remoteUpstreams(prof)[i]) {
					words = "none: the Authorization header in its headers is sent"
				}
				fmt.Fprintf(tw, "%s\t%s\n", printable.Line(s.Upstream), printable.Line(words))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&principal, "for", "", "show one caller's logins (auth.per_user) instead of the gateway's")
	return cmd
}

func newAuthLogoutCmd(e *env) *cobra.Command {
	var principal string
	cmd := &cobra.Command{
		Use:   "logout UPSTREAM",
		Short: "Forget the stored login of a remote upstream",
		Long: `logout removes the upstream's stored tokens. Running gateways stop sending them within
10 seconds; calls to the upstream then fail with auth_required until the next auth login.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, u, vault, err := e.authUpstream(cmd.Context(), args[0], false)
			if errors.Is(err, upstreamauth.ErrNoKey) {
				fmt.Fprintf(e.stdout, "%s: not logged in\n", args[0])
				return nil
			}
			if err != nil {
				return err
			}
			if err := vault.Delete(cmd.Context(), u.URL, principal); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s: logged out\n", u.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&principal, "for", "", "forget one caller's login (auth.per_user) instead of the gateway's")
	return cmd
}

// authUpstream finds the remote upstream name in the profile and opens the vault (making the key
// when create).
func (e *env) authUpstream(ctx context.Context, name string, create bool) (*config.Config, proxy.UpstreamConfig, *upstreamauth.Vault, error) {
	cfg, prof, err := e.loadConfig()
	if err != nil {
		return nil, proxy.UpstreamConfig{}, nil, err
	}
	var names []string
	for _, u := range remoteUpstreams(prof) {
		if u.Name != name {
			names = append(names, u.Name)
			continue
		}
		vault, err := e.vault(ctx, cfg, create)
		return cfg, u, vault, err
	}
	if len(names) == 0 {
		return nil, proxy.UpstreamConfig{}, nil, fmt.Errorf("%s: profile %s has no remote (url) upstream %q, nor any other", cfg.File, prof.Name, name)
	}
	return nil, proxy.UpstreamConfig{}, nil, fmt.Errorf("%s: profile %s has no remote (url) upstream %q; its remote upstreams: %v", cfg.File, prof.Name, name, names)
}

func remoteUpstreams(prof config.Profile) []proxy.UpstreamConfig {
	return slices.DeleteFunc(slices.Clone(prof.Upstreams), func(u proxy.UpstreamConfig) bool { return !isRemote(u) })
}

// vault opens the sealed logins in the state; create makes the key file when there is none (else
// ErrNoKey).
func (e *env) vault(ctx context.Context, cfg *config.Config, create bool) (*upstreamauth.Vault, error) {
	read := upstreamauth.ReadKey
	if create {
		read = upstreamauth.LoadKey
	}
	key, err := read(e.getenv, cfg.StateDir)
	if err != nil {
		return nil, err
	}
	st, err := e.cliState(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return upstreamauth.NewVault(st.Credentials(), key, 0)
}

// withAuthorizers gives each remote upstream its Authorizer: the stored login's token, or tokens
// exchanged for callers' (auth: token_exchange). Without a key yet, the upstreams open the logins
// once the first login makes one.
func (e *env) withAuthorizers(ctx context.Context, cfg *config.Config, ups []proxy.UpstreamConfig, log *slog.Logger) []proxy.UpstreamConfig {
	vault, openVault := e.logins(ctx, cfg, ups, log)
	out := make([]proxy.UpstreamConfig, len(ups))
	for i, u := range ups {
		if isRemote(u) && (vault != nil || openVault != nil || u.Auth != nil && u.Auth.TokenExchange != nil) {
			u.Authorizer = upstreamauth.NewAuthorizer(upstreamauth.AuthorizerOptions{
				Upstream: u.Name, URL: u.URL, Config: u.Auth, Vault: vault, OpenVault: openVault, Logger: log, Principal: proxy.PrincipalOf,
			})
		}
		out[i] = u
	}
	return out
}

// logins is the vault of stored logins, or, while no key was made yet, how to open it once the
// first login makes one (nil, nil when ups has no remote upstream or the logins cannot be read: a
// warning says so).
func (e *env) logins(ctx context.Context, cfg *config.Config, ups []proxy.UpstreamConfig, log *slog.Logger) (*upstreamauth.Vault, func() (*upstreamauth.Vault, error)) {
	if !slices.ContainsFunc(ups, isRemote) {
		return nil, nil
	}
	open := laterVault(e.getenv, cfg.StateDir, e.runState(ctx, cfg, log).Credentials())
	vault, err := open()
	switch {
	case errors.Is(err, upstreamauth.ErrNoKey):
		return nil, open
	case err != nil:
		log.Warn("upstream logins unavailable", "err", err)
		return nil, nil
	}
	return vault, nil
}

func isRemote(u proxy.UpstreamConfig) bool {
	return u.Transport == proxy.TransportStreamableHTTP || u.Transport == proxy.TransportSSE
}

// laterVault opens the vault of logins in creds once the token key exists, one vault for every
// upstream.
func laterVault(getenv func(string) (string, bool), stateDir string, creds upstreamauth.Store) func() (*upstreamauth.Vault, error) {
	var mu sync.Mutex
	var vault *upstreamauth.Vault
	return func() (*upstreamauth.Vault, error) {
		mu.Lock()
		defer mu.Unlock()
		if vault != nil {
			return vault, nil
		}
		key, err := upstreamauth.ReadKey(getenv, stateDir)
		if err != nil {
			return nil, err
		}
		vault, err = upstreamauth.NewVault(creds, key, 0)
		return vault, err
	}
}

func hasAuthorizationHeader(u proxy.UpstreamConfig) bool {
	return slices.ContainsFunc(slices.Collect(maps.Keys(u.Headers)), func(k string) bool { return strings.EqualFold(k, "Authorization") })
}
