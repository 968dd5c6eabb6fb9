package backup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
)

// Permission tokens of sys/backup, one per action (query covers find_page, get and info).
const (
	QueryPermission    = "sys.backup.query"
	CreatePermission   = "sys.backup.create"
	DeletePermission   = "sys.backup.delete"
	DownloadPermission = "sys.backup.download"
	RestorePermission  = "sys.backup.restore"
)

// Download links: GET DownloadPattern with the token download answered, valid downloadTTL.
const (
	DownloadPattern = "GET /backup/files/{id}"
	downloadTTL     = 10 * time.Minute
	// RestoreTimeout bounds restore's verification, which reads the whole archive.
	RestoreTimeout = 30 * time.Minute
)

// JobName is the cron job (and default schedule) of scheduled backups.
const JobName = "svc.backup"

// Resource returns sys/backup (doc.go, "Resources").
func (s *Service) Resource() rpc.Resource {
	return rpc.Resource{Name: "sys/backup", Ops: []rpc.Op{
		rpc.Handle("find_page", s.handleFindPage, rpc.RequiredPermission(QueryPermission)),
		rpc.Handle("get", s.handleGet, rpc.RequiredPermission(QueryPermission)),
		rpc.Handle("info", s.handleInfo, rpc.RequiredPermission(QueryPermission)),
		rpc.Handle("create", s.handleCreate, rpc.RequiredPermission(CreatePermission), rpc.Audit()),
		rpc.Handle("delete", s.handleDelete, rpc.RequiredPermission(DeletePermission), rpc.Audit()),
		rpc.Handle("download", s.handleDownload, rpc.RequiredPermission(DownloadPermission), rpc.Audit()),
		rpc.Handle("restore", s.handleRestore, rpc.RequiredPermission(RestorePermission), rpc.Audit(),
			rpc.Timeout(RestoreTimeout)),
	}}
}

// Search filters find_page by status.
type Search struct {
	Status string `json:"status,omitempty"`
}

// Validate implements rpc.Validator.
func (p *Search) Validate() error {
	var c rpc.Check
	c.Valid("status", p.Status == "" || p.Status == StatusRunning || p.Status == StatusSucceeded || p.Status == StatusFailed)
	return c.Err()
}

// IDParams address one backup.
type IDParams struct {
	ID string `json:"id"`
}

// Validate implements rpc.Validator.
func (p *IDParams) Validate() error {
	var c rpc.Check
	c.Required("id", p.ID != "")
	c.Identifier("id", p.ID, 64)
	return c.Err()
}

// CreateParams are create's params.
type CreateParams struct {
	// Destination overrides svc.backup.destination: "folder" or "storage".
	Destination string `json:"destination,omitempty"`
}

// Validate implements rpc.Validator.
func (p *CreateParams) Validate() error {
	var c rpc.Check
	c.Valid("destination", p.Destination == "" || p.Destination == config.BackupToFolder || p.Destination == config.BackupToStorage)
	return c.Err()
}

func (s *Service) handleFindPage(ctx context.Context, c rpc.Call, p Search) (*crud.Page[Backup], error) {
	m := crud.ReadMeta(c.Meta)
	rows, total, err := store{db: s.db}.page(ctx, p.Status, m)
	if err != nil {
		return nil, fmt.Errorf("backup: find page: %w", err)
	}
	if rows == nil {
		rows = []Backup{}
	}
	return &crud.Page[Backup]{Page: m.Page, Size: m.Size, Total: total, Items: rows}, nil
}

func (s *Service) handleGet(ctx context.Context, _ rpc.Call, p IDParams) (*Backup, error) {
	return s.Get(ctx, p.ID)
}

// Info is what the console shows above the list: where backups go and what they hold.
type Info struct {
	Destination      string `json:"destination"`
	Location         string `json:"location"`
	Encrypted        bool   `json:"encrypted"`
	DatabaseIncluded bool   `json:"databaseIncluded"`
	Database         string `json:"database"`
	// Advice is set on a server database: its own tools own backups (the commands).
	Advice string `json:"advice,omitempty"`
	// Schedule is the cron schedule of scheduled backups (edited on the Cron page).
	Schedule string `json:"schedule"`
}

func (s *Service) handleInfo(context.Context, rpc.Call, struct{}) (*Info, error) {
	loc := s.cfg.Dir
	if s.cfg.Destination == config.BackupToStorage {
		loc = s.cfg.StoragePrefix + "/"
	}
	return &Info{Destination: s.cfg.Destination, Location: loc, Encrypted: s.key != nil, DatabaseIncluded: s.db.Embedded(),
		Database: s.db.SystemName(), Advice: s.DatabaseAdvice(), Schedule: JobName}, nil
}

func (s *Service) handleCreate(ctx context.Context, c rpc.Call, p CreateParams) (*Backup, error) {
	return s.Start(ctx, Request{Destination: p.Destination, Trigger: TriggerManual, CreatedBy: c.Principal.ID})
}

func (s *Service) handleDelete(ctx context.Context, _ rpc.Call, p IDParams) (any, error) {
	return nil, s.Delete(ctx, p.ID)
}

// Download is download's answer: a link valid until ExpiresAtUnixMs, usable without the
// bearer token (a browser download), which the /api call's permission check stands for.
type Download struct {
	URL             string `json:"url"`
	Name            string `json:"name"`
	Size            int64  `json:"size"`
	ExpiresAtUnixMs int64  `json:"expiresAtUnixMs"`
}

func (s *Service) handleDownload(ctx context.Context, _ rpc.Call, p IDParams) (*Download, error) {
	b, err := s.Get(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	if b.Status != StatusSucceeded {
		return nil, ErrBackupNotFinished
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(raw)
	exp := s.clock().Add(downloadTTL).UnixMilli()
	if err := (store{db: s.db}).setDownload(ctx, b.ID, token, exp); err != nil {
		return nil, err
	}
	return &Download{URL: "/backup/files/" + url.PathEscape(b.ID) + "?token=" + token, Name: b.Name, Size: b.Size,
		ExpiresAtUnixMs: exp}, nil
}

// RestorePlan is restore's answer: the archive passed verification, and the steps that restore
// it. The server does not replace its own data while running (doc.go, "Restore").
type RestorePlan struct {
	Verified   bool           `json:"verified"`
	SnapshotAt int64          `json:"snapshotAtUnixMs"`
	SvcVersion string         `json:"svcVersion"`
	Schema     map[string]int `json:"schemaVersions"`
	Entries    int            `json:"entries"`
	TotalBytes int64          `json:"totalBytes"`
	Missing    int            `json:"missing"`
	Steps      []string       `json:"steps"`
}

func (s *Service) handleRestore(ctx context.Context, _ rpc.Call, p IDParams) (*RestorePlan, error) {
	b, err := s.Get(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	rc, _, err := s.Open(ctx, b)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var known map[string]int
	if s.opts.Known != nil {
		known = s.opts.Known()
	}
	m, err := Verify(rc, s.key, known)
	if err != nil {
		return nil, Refusal(err)
	}
	archive := b.Location
	if b.Destination == config.BackupToStorage {
		archive = "storage:" + b.Location
	}
	return &RestorePlan{Verified: true, SnapshotAt: m.SnapshotAt.UnixMilli(), SvcVersion: m.SvcVersion, Schema: m.SchemaVersions,
		Entries: len(m.Entries), TotalBytes: m.TotalBytes, Missing: len(m.Missing), Steps: []string{
			"stop every svc server of this installation",
			"svc restore " + strconv.Quote(archive),
			"start the server (svc serve) and check GET /readyz",
			"then delete the svc-replaced-<time> directory that svc restore named",
		}}, nil
}

// serveDownload streams an archive to the holder of a valid download link.
func (s *Service) serveDownload(w http.ResponseWriter, r *http.Request) {
	b, err := store{db: s.db}.byToken(r.Context(), r.PathValue("id"), r.URL.Query().Get("token"), s.clock().UnixMilli())
	if err != nil {
		s.errs.WriteError(w, r, rpc.ErrAccessDenied)
		return
	}
	rc, size, err := s.Open(r.Context(), b)
	if err != nil {
		s.errs.WriteError(w, r, err)
		return
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("Content-Disposition", `attachment; filename="`+b.Name+`"`)
	h.Set("Cache-Control", "private, no-store")
	if r.Method == http.MethodHead {
		return
	}
	buf := make([]byte, 1<<20)
	_, _ = io.CopyBuffer(w, rc, buf)
}
