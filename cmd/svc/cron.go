package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/svc-framework/svc/app"
	"github.com/svc-framework/svc/cron"
	"github.com/svc-framework/svc/i18n"
	"github.com/svc-framework/svc/rpc"
)

// cronCmd acts on the durable cron store (svc.cron.store) of the configured primary database:
// svc cron list | runs NAME | trigger NAME | pause NAME | resume NAME. It applies the cron
// migrations first and needs svc.cron.store.enabled. A trigger queues a manual fire that a
// running node claims within its poll_interval; nothing runs in this process.
func cronCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "cron", Short: "List, trigger, pause or resume durable schedules; show their runs"}
	var limit int
	runs := &cobra.Command{
		Use:   "runs NAME",
		Short: "Show the journal of a schedule, newest logical time last",
		Args:  cobra.ExactArgs(1),
		RunE: withCron(g, func(cmd *cobra.Command, ce *cronEnv, args []string) error {
			rs, err := ce.svc.Runs(cmd.Context(), args[0])
			if err != nil {
				return ce.explain(err)
			}
			if limit > 0 && len(rs) > limit {
				rs = rs[len(rs)-limit:]
			}
			return printRuns(cmd.OutOrStdout(), rs)
		}),
	}
	runs.Flags().IntVar(&limit, "limit", 50, "show at most this many runs, the latest (0 = all)")
	c.AddCommand(cronListCmd(g), runs,
		cronActionCmd(g, "trigger", "Queue a manual fire now (a running node claims it)", "trigger queued for",
			func(ctx context.Context, s *cron.Service, name string) error { return s.TriggerNow(ctx, name) }),
		cronActionCmd(g, "pause", "Pause a schedule (its cursor is kept)", "paused",
			func(ctx context.Context, s *cron.Service, name string) error { return s.Pause(ctx, "cli", name) }),
		cronActionCmd(g, "resume", "Resume a paused schedule (the misfire policy judges the gap)", "resumed",
			func(ctx context.Context, s *cron.Service, name string) error { return s.Resume(ctx, "cli", name) }))
	return c
}

func cronListCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the schedules",
		Args:  cobra.NoArgs,
		RunE: withCron(g, func(cmd *cobra.Command, ce *cronEnv, _ []string) error {
			ss, err := ce.svc.List(cmd.Context())
			if err != nil {
				return ce.explain(err)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tJOB\tTRIGGER\tENABLED\tNEXT FIRE\tLAST FIRE")
			for _, s := range ss {
				fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%s\t%s\n", s.Name, s.JobName, describeTrigger(s.Trigger), s.IsEnabled,
					stamp(s.NextFireAt), stamp(s.LastFireAt))
			}
			return w.Flush()
		}),
	}
}

func cronActionCmd(g *globalFlags, verb, short, done string, fn func(ctx context.Context, s *cron.Service, name string) error) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: withCron(g, func(cmd *cobra.Command, ce *cronEnv, args []string) error {
			if err := fn(cmd.Context(), ce.svc, args[0]); err != nil {
				return ce.explain(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "schedule %s: %s\n", args[0], done)
			return nil
		}),
	}
}

// printRuns writes runs as a table.
func printRuns(out io.Writer, rs []*cron.Run) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCHEDULED AT\tSTATUS\tNODE\tSTARTED\tDURATION\tMISSED\tERROR")
	for _, r := range rs {
		dur := ""
		if !r.FinishedAt.IsZero() && !r.StartedAt.IsZero() {
			dur = r.FinishedAt.Sub(r.StartedAt).String()
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", stamp(r.ScheduledAt), r.Status, r.NodeID, stamp(r.StartedAt), dur,
			r.MissedCount, r.Error)
	}
	return w.Flush()
}

// describeTrigger is a trigger in one short column.
func describeTrigger(t cron.Trigger) string {
	switch t.Kind {
	case cron.KindCron:
		return fmt.Sprintf("cron %q %s", t.Expr, t.Timezone)
	case cron.KindInterval:
		return "every " + t.Every.String()
	default:
		return "once " + stamp(t.At)
	}
}

// stamp is an instant in RFC 3339 UTC, "-" when absent.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// cronEnv is what every cron subcommand works with.
type cronEnv struct {
	svc  *cron.Service
	msgs *i18n.Catalog
}

// explain renders module errors from the message catalog in the configured language.
func (ce *cronEnv) explain(err error) error {
	if e, ok := rpc.AsError(err); ok {
		return errors.New(ce.msgs.T(e.Key, e.Args))
	}
	return err
}

// withCron loads the configuration, refuses while the store is disabled, opens the primary data
// source, applies the cron migrations and runs fn with a cron service (no workers).
func withCron(g *globalFlags, fn func(cmd *cobra.Command, ce *cronEnv, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cfg, err := load(g, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		if !cfg.Cron.Store.Enabled {
			return errors.New("the cron store is off: set svc.cron.store.enabled = true")
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
		defer cancel()
		d, err := openPrimaryDB(ctx, cfg, *cron.Migrations())
		if err != nil {
			return err
		}
		defer d.Close()
		msgs, err := i18n.New(cfg.I18n.Language, cron.Messages())
		if err != nil {
			return err
		}
		s, err := cron.New(app.Platform{Config: cfg, DB: d, Clock: time.Now, Logger: slog.New(slog.DiscardHandler)}, cron.Options{NodeID: "cli"})
		if err != nil {
			return err
		}
		cmd.SetContext(ctx)
		return fn(cmd, &cronEnv{svc: s, msgs: msgs}, args)
	}
}
