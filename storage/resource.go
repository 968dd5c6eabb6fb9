package storage

import (
	"context"
	"time"

	"github.com/svc-framework/svc/rpc"
)

// Operation settings of sys/storage beyond the engine defaults.
const (
	// UploadPartTimeout bounds one part: a 16 MiB part must get through slow links.
	UploadPartTimeout = 10 * time.Minute
	// CompleteTimeout bounds complete_upload: the filesystem backend copies the whole object.
	CompleteTimeout = 5 * time.Minute
)

// InitUploadParams are the params of init_upload (spec §2.4).
type InitUploadParams struct {
	Filename    string `json:"filename"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
	Public      bool   `json:"public"`
}

// Validate implements rpc.Validator (spec §8.2): filename required, at most 255 characters;
// size at least 1; contentType at most 127 characters.
func (p *InitUploadParams) Validate() error {
	var c rpc.Check
	c.Required("filename", p.Filename != "")
	c.MaxLen("filename", p.Filename, 255)
	c.Min("size", p.Size, 1)
	c.MaxLen("contentType", p.ContentType, 127)
	return c.Err()
}

// InitUploadResult is the data of init_upload.
type InitUploadResult struct {
	Key              string    `json:"key"`
	ClaimID          string    `json:"claimId"`
	OriginalFilename string    `json:"originalFilename"`
	PartSize         int64     `json:"partSize"`
	PartCount        int       `json:"partCount"`
	ExpiresAt        time.Time `json:"expiresAt"`
}

// UploadPartParams are the JSON params of upload_part; the part itself is the file field "file".
type UploadPartParams struct {
	ClaimID    string `json:"claimId"`
	PartNumber int    `json:"partNumber"`
}

// maxClaimIDLength bounds claimId (the claim tables' id column is 128 characters); longer or
// control-character ids are 400/1400 before any store is asked (issue #11 item 5).
const maxClaimIDLength = 128

// Validate implements rpc.Validator: claimId required and identifier-like, partNumber at least 1.
func (p *UploadPartParams) Validate() error {
	var c rpc.Check
	c.Required("claimId", p.ClaimID != "")
	c.Identifier("claimId", p.ClaimID, maxClaimIDLength)
	c.Required("partNumber", p.PartNumber != 0)
	c.Min("partNumber", int64(p.PartNumber), 1)
	return c.Err()
}

// UploadPartResult is the data of upload_part. The part's ETag stays on the server.
type UploadPartResult struct {
	PartNumber int   `json:"partNumber"`
	Size       int64 `json:"size"`
}

// ClaimParams are the params of list_parts, complete_upload and abort_upload.
type ClaimParams struct {
	ClaimID string `json:"claimId"`
}

// Validate implements rpc.Validator: claimId required and identifier-like.
func (p *ClaimParams) Validate() error {
	var c rpc.Check
	c.Required("claimId", p.ClaimID != "")
	c.Identifier("claimId", p.ClaimID, maxClaimIDLength)
	return c.Err()
}

// PartInfo is one recorded part in list_parts.
type PartInfo struct {
	PartNumber int   `json:"partNumber"`
	Size       int64 `json:"size"`
}

// ListPartsResult is the data of list_parts: parts in ascending partNumber.
type ListPartsResult struct {
	Parts []PartInfo `json:"parts"`
}

// CompleteUploadResult is the data of complete_upload (wire-core §7.4).
type CompleteUploadResult struct {
	Bucket           string            `json:"bucket"`
	Key              string            `json:"key"`
	ETag             string            `json:"eTag"`
	Size             int64             `json:"size"`
	ContentType      string            `json:"contentType"`
	LastModified     time.Time         `json:"lastModified"`
	Metadata         map[string]string `json:"metadata,omitempty"`
	OriginalFilename string            `json:"originalFilename"`
}

// Resource returns sys/storage (spec §2.4, §4.1): Bearer, no permission, and the engine
// default rate limit on every action (spec §4.1 gives storage no limit of its own; wire-core
// §7.2). Only svc.storage.upload_part_rate_limit (our key) gives upload_part its own maximum,
// counted over the engine period; at 0 rpc.RateLimit keeps the engine default. upload_part reads
// its part from the multipart envelope, which an in-process call (an MCP tool) cannot send: it
// is declared rpc.HTTPOnly and served only over /api.
func (s *Service) Resource() rpc.Resource {
	return rpc.Resource{Name: "sys/storage", Ops: []rpc.Op{
		rpc.Handle("init_upload", s.handleInit),
		rpc.Handle("upload_part", s.handleUploadPart, rpc.HTTPOnly(), // the part is a multipart file
			rpc.RateLimit(s.cfg.UploadPartRateLimit, 0), rpc.Timeout(UploadPartTimeout)),
		rpc.Handle("list_parts", s.handleListParts),
		rpc.Handle("complete_upload", s.handleComplete, rpc.Timeout(CompleteTimeout)),
		rpc.Handle("abort_upload", s.handleAbort),
	}}
}

func (s *Service) handleInit(ctx context.Context, c rpc.Call, p InitUploadParams) (*InitUploadResult, error) {
	return s.initUpload(ctx, c.Principal, p)
}

// handleUploadPart takes the part from the multipart envelope: a JSON request answers 2210 and
// a request without a "file" part 2211 (wire-core §7.2).
func (s *Service) handleUploadPart(ctx context.Context, c rpc.Call, p UploadPartParams) (*UploadPartResult, error) {
	if c.Files == nil {
		return nil, ErrUploadRequiresMultipart
	}
	f, ok, err := c.Files.File("file")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrUploadRequiresFile
	}
	return s.uploadPart(ctx, c.Principal, p.ClaimID, p.PartNumber, f, f.Size())
}

func (s *Service) handleListParts(ctx context.Context, c rpc.Call, p ClaimParams) (*ListPartsResult, error) {
	return s.listParts(ctx, c.Principal, p.ClaimID)
}

func (s *Service) handleComplete(ctx context.Context, c rpc.Call, p ClaimParams) (*CompleteUploadResult, error) {
	return s.completeUpload(ctx, c.Principal, p.ClaimID)
}

// handleAbort answers no data (spec §2.4).
func (s *Service) handleAbort(ctx context.Context, c rpc.Call, p ClaimParams) (any, error) {
	return nil, s.abortUpload(ctx, c.Principal, p.ClaimID)
}
