package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/svc-framework/svc/crud"
	"github.com/svc-framework/svc/rpc"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/uptrace/bun"
)

// Permission tokens of the file registry's operator actions on sys/storage/file (svc additions,
// issue #35). Listing does not grant reading: downloading a private file still takes the ACL
// (the uploader, ReadPermission or the system).
const (
	QueryPermission  = "sys.storage.file.query"  // find_page
	DeletePermission = "sys.storage.file.delete" // delete
)

// FileSearch filters find_page: Keyword is contained in the original file name or the key
// (letter case ignored), Status is one status (empty: every status but deleted), ContentType a
// prefix of the content type ("image/"), UploadedBy the uploader's principal id, Public the
// public flag.
type FileSearch struct {
	Keyword     string `json:"keyword,omitempty"`
	Status      string `json:"status,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	UploadedBy  string `json:"uploadedBy,omitempty"`
	Public      *bool  `json:"public,omitempty"`
}

// Validate implements rpc.Validator.
func (s *FileSearch) Validate() error {
	var c rpc.Check
	c.Identifier("keyword", s.Keyword, 255)
	c.Valid("status", s.Status == "" || s.Status == FileStatusUploaded || s.Status == FileStatusClaimed || s.Status == FileStatusDeleted)
	c.Identifier("contentType", s.ContentType, 255)
	c.Identifier("uploadedBy", s.UploadedBy, 255)
	return c.Err()
}

// fileSearch is the filter plan of FileSearch, newest upload first by default.
var fileSearch = crud.NewSearch(
	crud.Keyword(func(s *FileSearch) string { return s.Keyword }, "original_filename", "object_key"),
	crud.Where(func(*FileSearch) bool { return true }, func(q *bun.SelectQuery, s *FileSearch) *bun.SelectQuery {
		if s.Status == "" {
			return q.Where("f.status <> ?", FileStatusDeleted)
		}
		return q.Where("f.status = ?", s.Status)
	}),
	crud.Where(func(s *FileSearch) bool { return s.ContentType != "" }, func(q *bun.SelectQuery, s *FileSearch) *bun.SelectQuery {
		return q.Where("f.content_type LIKE ? ESCAPE '!'", crud.EscapeLike(s.ContentType)+"%")
	}),
	crud.Eq("created_by", func(s *FileSearch) string { return s.UploadedBy }),
	crud.EqPtr("public", func(s *FileSearch) *bool { return s.Public }),
).SortAs("uploadedAt", "started_at").SortAs("key", "object_key").Sortable("size", "originalFilename").
	OrderBy("started_at DESC")

// FileView is one registry record as find_page answers it. Times are DateTime, as resolve's.
type FileView struct {
	Key              string    `json:"key"`
	OriginalFilename string    `json:"originalFilename"`
	ContentType      string    `json:"contentType"`
	Size             int64     `json:"size"`
	Public           bool      `json:"public"`
	Status           string    `json:"status"`
	UploadedAt       DateTime  `json:"uploadedAt"`
	UploadedBy       string    `json:"uploadedBy"`
	ClaimedAt        *DateTime `json:"claimedAt,omitempty"`
	DeletedAt        *DateTime `json:"deletedAt,omitempty"`
	DeleteReason     string    `json:"deleteReason,omitempty"`
	// Deleting is true while the object waits in the delete queue (delete_worker_interval).
	Deleting bool `json:"deleting"`
}

// fileListRow is a registry row with its queued-delete flag.
type fileListRow struct {
	fileRow  `bun:",extend"`
	Deleting bool `bun:"deleting"`
}

func optionalTime(t time.Time) *DateTime {
	if t.IsZero() {
		return nil
	}
	d := DateTime(t)
	return &d
}

// FindFiles returns one page of the registry filtered by search and ordered by meta's sort
// (default: newest upload first), with the number of matching records.
func (s *Service) FindFiles(ctx context.Context, search FileSearch, meta crud.Meta) (*crud.Page[FileView], error) {
	var rows []fileListRow
	q := s.db.NewSelect().Model(&rows).ModelTableExpr("sys_storage_file AS f").ColumnExpr("f.*").
		ColumnExpr("EXISTS (SELECT 1 FROM sys_storage_pending_delete AS d WHERE d.object_key = f.object_key) AS deleting")
	q, err := fileSearch.Sort(fileSearch.Apply(q, &search, nil), meta.Sort)
	if err != nil {
		return nil, err
	}
	total, err := q.Limit(int64(meta.Size)).Offset(int64((meta.Page - 1) * meta.Size)).ScanAndCount(ctx)
	if err != nil {
		return nil, fmt.Errorf("storage: find files: %w", err)
	}
	page := &crud.Page[FileView]{Page: meta.Page, Size: meta.Size, Total: int64(total), Items: make([]FileView, len(rows))}
	for i := range rows {
		f := rows[i].file()
		page.Items[i] = FileView{Key: f.Key, OriginalFilename: f.OriginalFilename, ContentType: f.ContentType, Size: f.Size,
			Public: f.Public, Status: f.Status, UploadedAt: DateTime(f.UploadedAt), UploadedBy: f.UploadedBy,
			ClaimedAt: optionalTime(f.ClaimedAt), DeletedAt: optionalTime(f.DeletedAt), DeleteReason: f.DeleteReason,
			Deleting: rows[i].Deleting}
	}
	return page, nil
}

// FileKeyParams address one file of the registry.
type FileKeyParams struct {
	Key string `json:"key"`
}

// Validate implements rpc.Validator.
func (p *FileKeyParams) Validate() error {
	var c rpc.Check
	c.Required("key", p.Key != "")
	c.Identifier("key", p.Key, backend.MaxKeyLength)
	return c.Err()
}

// DeleteFile queues the file of key for deletion with reason "deleted", as Delete does for a
// host's business record; the delete worker removes the object and marks the record. An unknown
// or already deleted key is rpc.ErrRecordNotFound (2001).
func (s *Service) DeleteFile(ctx context.Context, key string) error {
	f, ok, err := s.files.lookup(ctx, s.db, key)
	if err != nil {
		return fmt.Errorf("storage: delete file: %w", err)
	}
	if !ok || f.Status == FileStatusDeleted {
		return rpc.ErrRecordNotFound
	}
	return s.Delete(ctx, s.db, key)
}

func (s *Service) handleFindFiles(ctx context.Context, c rpc.Call, search FileSearch) (*crud.Page[FileView], error) {
	return s.FindFiles(ctx, search, crud.ReadMeta(c.Meta))
}

func (s *Service) handleDeleteFile(ctx context.Context, _ rpc.Call, p FileKeyParams) (any, error) {
	return nil, s.DeleteFile(ctx, p.Key)
}
