// Command svc runs the svc framework with every module on the configuration found by the spec's
// search order (./configs, $SVC_CONFIG_PATH, ., ../configs) — by default the embedded setup of
// configs/application.toml: SQLite, filesystem storage, in-process bus.
//
//	svc serve          run the server until SIGINT/SIGTERM
//	svc migrate        apply every module's pending migrations
//	svc config check   validate and print the effective configuration (secrets redacted)
//	svc user …         manage the built-in users (add, passwd, disable, enable, list, roles, totp)
//	svc session …      list or revoke opaque-token sessions (forced logout)
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
	if err := newRoot().ExecuteContext(ctx); err != nil {
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
}

func newRoot() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "svc",
		Short:         "svc application framework service",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&g.configPath, "config", "c", "",
		"path of application.toml (default: search ./configs, $SVC_CONFIG_PATH, ., ../configs)")
	root.AddCommand(serveCmd(g), migrateCmd(g), configCmd(g), versionCmd(), userCmd(g), sessionCmd(g), pushCmd(g))
	return root
}
