// Command svc runs the svc framework with every module on the configuration found by the spec's
// search order (./configs, $SVC_CONFIG_PATH, ., ../configs) — by default the embedded setup of
// configs/application.toml: SQLite, filesystem storage, in-process bus.
//
//	svc serve          run the server until SIGINT/SIGTERM
//	svc migrate        apply every module's pending migrations
//	svc config check   validate and print the effective configuration (secrets redacted)
//	svc user …         manage the built-in users (add, passwd, disable, enable, list, roles, totp,
//	                   set-department, set-superior)
//	svc dept …         manage the built-in departments (add, list, set-leader)
//	svc session …      list or revoke opaque-token sessions (forced logout)
//	svc cron …         list, trigger, pause or resume durable schedules; show their runs
//	svc integration …  rotate-key: re-encrypt the integration secrets under a new key
//	svc push send      push a message to users, roles or everyone through the Redis relay
//	svc backup         write a backup archive (--to PATH|storage)
//	svc restore ARCH   restore a backup archive with the server stopped
//	svc version        print version data
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot(os.LookupEnv).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "svc:", err)
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		os.Exit(1)
	}
}

// exitError carries a specific exit status out of a command.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// globalFlags are shared by every command.
type globalFlags struct {
	configPath string
	// env looks up an environment variable for the configuration overlay (os.LookupEnv in the
	// binary; tests pass a lookup that ignores the caller's SVC_* variables).
	env func(string) (string, bool)
}

// newRoot builds the command tree; env is the environment the configuration is read with.
func newRoot(env func(string) (string, bool)) *cobra.Command {
	g := &globalFlags{env: env}
	root := &cobra.Command{
		Use:           "svc",
		Short:         "svc application framework service",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&g.configPath, "config", "c", "",
		"path of application.toml (default: search ./configs, $SVC_CONFIG_PATH, ., ../configs)")
	root.AddCommand(serveCmd(g), migrateCmd(g), configCmd(g), versionCmd(), userCmd(g), deptCmd(g), sessionCmd(g), cronCmd(g), integrationCmd(g), pushCmd(g), backupCmd(g), restoreCmd(g))
	return root
}
