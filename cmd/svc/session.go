package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/kv"
	"github.com/svc-framework/svc/push"
	"github.com/svc-framework/svc/security"
)

// sessionCmd lists and revokes opaque-token sessions (security module, token_type
// opaque_token): svc session list USER, svc session revoke ID | --user USER. It works on the
// session store the server uses (Redis when svc.kvstore.enabled, else the primary database), so
// a revocation takes effect on every node at once. Live push connections of a revoked session
// are kicked at once on every node through the push relay when push and the key-value store are
// enabled; otherwise the push module's session recheck closes them (the revocation hook runs
// only in the process that revokes).
func sessionCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "session", Short: "List or revoke login sessions (token_type opaque_token; forced logout)"}
	c.AddCommand(&cobra.Command{
		Use:   "list USER",
		Short: "List the live sessions of a user (user name of the built-in store, or principal id)",
		Args:  cobra.ExactArgs(1),
		RunE: withSessions(g, func(cmd *cobra.Command, se *sessionEnv, args []string) error {
			id, err := se.principalID(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			ss, err := se.sessions.List(cmd.Context(), id)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tCREATED\tLAST SEEN\tEXPIRES\tCLIENT IP")
			for _, s := range ss {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.CreatedAt.Format(time.RFC3339), s.LastSeenAt.Format(time.RFC3339),
					s.ExpiresAt.Format(time.RFC3339), s.ClientIP)
			}
			return w.Flush()
		}),
	})
	var user string
	revoke := &cobra.Command{
		Use:   "revoke ID | --user USER",
		Short: "Revoke one session by id, or every session of a user (forced logout)",
		Args: func(_ *cobra.Command, args []string) error {
			if (len(args) == 1) == (user != "") || len(args) > 1 {
				return errors.New("give either one session ID or --user USER")
			}
			return nil
		},
		RunE: withSessions(g, func(cmd *cobra.Command, se *sessionEnv, args []string) error {
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			if user != "" {
				id, err := se.principalID(ctx, user)
				if err != nil {
					return err
				}
				live, err := se.sessions.List(ctx, id)
				if err != nil {
					return err
				}
				n, err := se.sessions.RevokeUser(ctx, id)
				if err != nil {
					return err
				}
				se.kick(ctx, cmd, sessionIDs(live)...)
				fmt.Fprintf(out, "%d session(s) of %s revoked\n", n, user)
				return nil
			}
			ok, err := se.sessions.Revoke(ctx, args[0])
			if err != nil {
				return err
			}
			if !ok {
				return exitError{code: 1, err: fmt.Errorf("no live session %s", args[0])}
			}
			se.kick(ctx, cmd, args[0])
			fmt.Fprintf(out, "session %s revoked\n", args[0])
			return nil
		}),
	}
	revoke.Flags().StringVar(&user, "user", "", "revoke every session of this user (user name or principal id)")
	c.AddCommand(revoke)
	return c
}

// sessionEnv is what every session subcommand works with.
type sessionEnv struct {
	sessions *security.Sessions
	store    *security.Store
	cfg      *config.Config
	kv       *redis.Client // nil without svc.kvstore
}

// kick closes the push connections of revoked sessions on every node at once through the push
// relay (with push and the key-value store enabled); without it the nodes' session recheck
// closes them within svc.push.session_recheck_interval. A failure is reported, not fatal: the
// revocation itself succeeded.
func (se *sessionEnv) kick(ctx context.Context, cmd *cobra.Command, ids ...string) {
	if err := push.SendKick(ctx, se.cfg, se.kv, ids...); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: push connections not kicked at once (the recheck will close them): %v\n", err)
	}
}

// sessionIDs returns the ids of sessions.
func sessionIDs(ss []security.Session) []string {
	ids := make([]string, len(ss))
	for i, s := range ss {
		ids[i] = s.ID
	}
	return ids
}

// principalID maps a user name of the built-in store to its id; anything else is taken as a
// principal id (users of host authenticators).
func (se *sessionEnv) principalID(ctx context.Context, name string) (string, error) {
	u, err := se.store.LookupUser(ctx, name)
	switch {
	case err == nil:
		return u.ID, nil
	case errors.Is(err, security.ErrUserNotFound):
		return name, nil
	}
	return "", err
}

// withSessions loads the configuration, refuses unless token_type is opaque_token, opens the
// primary data source (applying the security migrations) and the key-value store when enabled,
// and runs fn.
func withSessions(g *globalFlags, fn func(cmd *cobra.Command, se *sessionEnv, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, err := load(g, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		if cfg.Security.TokenType != config.TokenTypeOpaque {
			return errors.New(`sessions exist only with svc.security.token_type = "opaque_token"`)
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
		defer cancel()
		d, err := openSecurityDB(ctx, cfg)
		if err != nil {
			return err
		}
		defer d.Close()
		client, err := kv.Open(ctx, cfg.KVStore)
		if err != nil {
			return err
		}
		if client != nil {
			defer client.Close()
		}
		cmd.SetContext(ctx)
		se := &sessionEnv{sessions: security.OpenSessions(cfg, d, client, time.Now),
			store: security.OpenStore(d, cfg.Security, security.HashParams{}, time.Now), cfg: cfg, kv: client}
		return fn(cmd, se, args)
	}
}
