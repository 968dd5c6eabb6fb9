package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/svc-framework/svc/backup"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/storage"
)

// backupCmd is `svc backup [--to PATH|storage]`: one archive of the embedded database (an
// online snapshot; the server may keep running) and the files it references, written to a
// folder or the storage backend. On a server database it says the database's own tools own
// backups and archives the files only.
func backupCmd(g *globalFlags) *cobra.Command {
	var to string
	c := &cobra.Command{
		Use:   "backup",
		Short: "Write a backup archive (embedded database snapshot and uploaded files)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := newServer(g, cmd)
			if err != nil {
				return err
			}
			req := backup.Request{Trigger: backup.TriggerCLI, CreatedBy: "cli"}
			switch to {
			case "":
			case config.BackupToStorage:
				req.Destination = config.BackupToStorage
			default:
				req.Destination, req.Dir = config.BackupToFolder, to
			}
			stderr := cmd.ErrOrStderr()
			bar := newProgressBar(stderr)
			req.Progress = bar.update
			return srv.BackupService(cmd.Context(), func(s *backup.Service) error {
				if advice := s.DatabaseAdvice(); advice != "" {
					fmt.Fprintln(stderr, advice)
				}
				b, err := s.Create(cmd.Context(), req)
				bar.done()
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "backup %s: %s (%s, %d files)\n", b.ID, b.Location, byteSize(b.Size), b.FileCount)
				return nil
			})
		},
	}
	c.Flags().StringVar(&to, "to", "", `a folder, or "storage" for the storage backend (default: svc.backup.destination)`)
	return c
}

// restoreCmd is `svc restore ARCHIVE` with the server stopped: it verifies the whole archive
// first and refuses a partial, corrupt or newer one without touching the current data, then
// sets the current database and files aside and puts the archive's in place. ARCHIVE is a file
// or storage:KEY (an archive in the storage backend).
func restoreCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "restore ARCHIVE",
		Short: "Restore a backup archive (the server must be stopped)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, err := newServer(g, cmd)
			if err != nil {
				return err
			}
			open, err := archiveOpener(srv.Config(), args[0])
			if err != nil {
				return err
			}
			o, err := srv.RestoreOptions(open)
			if err != nil {
				return err
			}
			res, err := backup.Restore(cmd.Context(), o)
			if err != nil {
				return fmt.Errorf("restore refused, nothing was changed: %w", err)
			}
			out := cmd.OutOrStdout()
			m := res.Manifest
			fmt.Fprintf(out, "restored the backup of %s (svc %s): database %t, %d files\n",
				m.SnapshotAt.Format(time.RFC3339), m.SvcVersion, m.DatabaseIncluded, res.Objects)
			if len(m.Missing) > 0 {
				fmt.Fprintf(out, "%d files were deleted while the backup ran and are not in it\n", len(m.Missing))
			}
			if res.Aside != "" {
				fmt.Fprintf(out, "the replaced data is in %s\nstart the server, check GET /readyz, then remove it: rm -rf %q\n", res.Aside, res.Aside)
			}
			return nil
		},
	}
}

// archiveOpener opens a file path, or storage:KEY through the configured storage backend.
func archiveOpener(cfg *config.Config, arg string) (func(context.Context) (io.ReadCloser, error), error) {
	if key, ok := strings.CutPrefix(arg, "storage:"); ok {
		b, err := storage.NewBackend(cfg.Storage, time.Now)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) (io.ReadCloser, error) {
			rc, _, err := b.Get(ctx, key, nil)
			return rc, err
		}, nil
	}
	if _, err := os.Stat(arg); err != nil {
		return nil, err
	}
	return func(context.Context) (io.ReadCloser, error) { return os.Open(arg) }, nil
}

// progressBar draws "[#####.....] 42% 1.2 GiB / 2.9 GiB" on a terminal; elsewhere it is silent.
type progressBar struct {
	w    io.Writer
	on   bool
	last string
}

func newProgressBar(w io.Writer) *progressBar {
	f, ok := w.(*os.File)
	on := false
	if ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progressBar{w: w, on: on}
}

func (p *progressBar) update(done, total int64) {
	if !p.on || total <= 0 {
		return
	}
	pct := min(done*100/total, 100)
	const width = 30
	fill := int(pct) * width / 100
	line := fmt.Sprintf("\r[%s%s] %3d%% %s / %s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct,
		byteSize(done), byteSize(total))
	if line != p.last {
		p.last = line
		fmt.Fprint(p.w, line)
	}
}

func (p *progressBar) done() {
	if p.on && p.last != "" {
		fmt.Fprintln(p.w)
	}
}

// byteSize is n in binary units.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
