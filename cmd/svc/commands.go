package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"
	"github.com/svc-framework/svc"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/approval"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/integration"
	"github.com/svc-framework/svc/security"
)

// load reads the configuration, prints its warnings (unknown keys, ...) to stderr and validates.
func load(g *globalFlags, stderr io.Writer) (*config.Config, error) {
	cfg, warnings, err := config.Load(config.LoadOptions{Path: g.configPath, Env: g.env})
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func newServer(g *globalFlags, cmd *cobra.Command, opts ...svc.Option) (*svc.Server, error) {
	cfg, err := load(g, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	return svc.New(cfg, append(hostOptions(), opts...)...)
}

func serveCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the server until SIGINT or SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load(g, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			srv, err := svc.New(cfg, hostOptions()...)
			if err != nil {
				return err
			}
			applyMemoryPolicy(cfg, g.env, srv.Logger())
			return srv.Run(cmd.Context())
		},
	}
}

func migrateCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply every module's pending migrations (whatever auto_migrate says)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := newServer(g, cmd)
			if err != nil {
				return err
			}
			applied, err := srv.Migrate(cmd.Context())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, m := range applied {
				fmt.Fprintf(out, "applied %s %03d_%s\n", m.Module, m.Version, m.Name)
			}
			fmt.Fprintf(out, "%d migration(s) applied; the database is up to date\n", len(applied))
			return nil
		},
	}
}

func configCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "Inspect the configuration"}
	c.AddCommand(&cobra.Command{
		Use:   "check",
		Short: "Validate the configuration and print the effective values, secrets redacted",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load(g, cmd.ErrOrStderr())
			if err != nil {
				return exitError{code: 2, err: err}
			}
			if err := cfg.Validate(); err != nil {
				return exitError{code: 2, err: err}
			}
			out := cmd.OutOrStdout()
			source := cfg.Source
			if source == "" {
				source = "environment only"
			}
			fmt.Fprintf(out, "# configuration OK (%s); effective values, secrets redacted\n", source)
			return toml.NewEncoder(out).Encode(cfg.Redacted())
		},
	})
	return c
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version data",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := app.BuildInfo()
			commit := app.Shown(b.GitCommit)
			if b.GitModified {
				commit += " (modified)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "svc %s\napp version: %s\nbuild time:  %s\ngit commit:  %s\ngo:          %s\n",
				app.Shown(b.FrameworkVersion), app.Shown(b.AppVersion), app.Shown(b.BuildTime), commit, b.GoVersion)
			return nil
		},
	}
}

// hostOptions are the options of the ready binary: the default boot chain plus the cron store's
// built-in jobs (http.request, event.publish), so schedules work without host code, and the
// integration module (the binary runs every module, spec §1) with one inbound handler,
// svc.echo, which answers what it is dispatched — the binary has no business code, and the
// walkthrough of docs/integration.md delivers to it — and the approval module.
func hostOptions() []svc.Option {
	echo := integration.NewInboundHandler("svc.echo", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		return in, nil
	})
	return []svc.Option{svc.WithCron(cron.Options{Builtins: true}),
		svc.WithIntegration(integration.Options{InboundHandlers: []integration.InboundHandler{echo}}),
		svc.WithApproval(approval.Options{})}
}

// openSecurityDB opens the primary data source and applies the security module's migrations, so
// the user and session commands work on a fresh database. The caller closes it.
func openSecurityDB(ctx context.Context, cfg *config.Config) (*db.DB, error) {
	return openPrimaryDB(ctx, cfg, *security.Migrations())
}

// openPrimaryDB opens the primary data source and applies the migration sets given. The caller
// closes it.
func openPrimaryDB(ctx context.Context, cfg *config.Config, sets ...db.Migrations) (*db.DB, error) {
	d, err := db.Open(ctx, config.PrimaryDataSource, cfg.DataSources[config.PrimaryDataSource])
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, d, sets...); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}
