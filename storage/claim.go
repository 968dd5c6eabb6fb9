package storage

import (
	"fmt"
	"mime"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svc-framework/svc/rpc"
)

// Claim states (spec §3). A claim row exists only while it is pending or uploaded: abort,
// adoption, expiry and orphan reclamation delete it (and queue the object for deletion where it
// must go), so "non-pending" on the wire means uploaded or gone.
const (
	StatusPending  = "pending"
	StatusUploaded = "uploaded"
)

// Key prefixes of public and private objects (wire-core §7.6).
const (
	PublicPrefix  = "pub/"
	PrivatePrefix = "priv/"
)

// Claim is one upload session (table sys_storage_upload_claim).
type Claim struct {
	ID               string
	CreatedAt        time.Time
	CreatedBy        string // the uploader's principal id
	Key              string
	UploadID         string // the backend session; never shown to clients
	Size             int64
	ContentType      string
	OriginalFilename string
	Status           string
	Public           bool
	PartSize         int64
	PartCount        int
	ExpiresAt        time.Time
}

// expired reports whether the claim is past its expiry at now.
func (c *Claim) expired(now time.Time) bool { return !now.Before(c.ExpiresAt) }

// lastPart is the number of the final part, the only one that may be smaller than PartSize.
func (c *Claim) lastPart() int { return c.PartCount }

// PartCount returns ceil(size / partSize), at least 1 (wire-core §7.1).
func PartCount(size, partSize int64) int {
	if size <= 0 || partSize <= 0 {
		return 1
	}
	return int((size + partSize - 1) / partSize)
}

// newID returns a UUIDv7 in canonical form (claim ids, key names, row ids): svc's one generator.
var newID = rpc.NewID

// extPattern is the extension a key may keep; anything else becomes ".bin" (wire-core §7.1). The
// bound of 32 characters is ours (doc.go, compatibility choices).
var extPattern = regexp.MustCompile(`^\.[a-zA-Z0-9]{1,32}$`)

// ObjectKey plans the key of a new upload: pub/ or priv/, the UTC date of now, a UUIDv7 and the
// filename's extension when it is plain letters and digits, else ".bin" (the original uses the
// server's local date; svc keeps every stored time in UTC).
func ObjectKey(public bool, filename string, now time.Time) string {
	prefix := PrivatePrefix
	if public {
		prefix = PublicPrefix
	}
	ext := filepath.Ext(filename)
	if !extPattern.MatchString(ext) {
		ext = ".bin"
	}
	return prefix + now.UTC().Format("2006/01/02/") + newID() + ext
}

// SanitizeFilename returns the name to store for a client filename: trimmed, without any
// directory part (after the last "/" or "\"), trimmed again. An empty result, "." or "..", or
// any control character or invalid UTF-8 answers ErrInvalidFilename (2220).
func SanitizeFilename(name string) (string, error) {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = strings.TrimSpace(name[i+1:])
	}
	if name == "" || name == "." || name == ".." || !utf8.ValidString(name) {
		return "", ErrInvalidFilename
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "", ErrInvalidFilename
		}
	}
	return name, nil
}

// safeTypes are content types that browsers never execute as active content, besides every
// image/, audio/, video/ and font/ type except SVG (which can carry script).
var safeTypes = map[string]bool{
	"application/pdf":               true,
	"application/zip":               true,
	"application/gzip":              true,
	"application/x-tar":             true,
	"application/octet-stream":      true,
	"application/x-7z-compressed":   true,
	"application/vnd.rar":           true,
	"application/msword":            true,
	"application/vnd.ms-excel":      true,
	"application/vnd.ms-powerpoint": true,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   true,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         true,
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": true,
	"text/plain": true,
	"text/csv":   true,
}

// extensionTypes is the extension table used instead of the host's mime.types, so detection is
// the same on every machine. Only safe types are listed.
var extensionTypes = map[string]string{
	".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip",
	".tgz": "application/gzip", ".tar": "application/x-tar", ".7z": "application/x-7z-compressed",
	".rar": "application/vnd.rar", ".txt": "text/plain", ".csv": "text/csv",
	".doc": "application/msword", ".xls": "application/vnd.ms-excel", ".ppt": "application/vnd.ms-powerpoint",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".png":  "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".avif": "image/avif", ".bmp": "image/bmp", ".ico": "image/x-icon",
	".tif": "image/tiff", ".tiff": "image/tiff", ".heic": "image/heic",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".m4a": "audio/mp4",
	".flac": "audio/flac", ".aac": "audio/aac", ".mp4": "video/mp4", ".webm": "video/webm",
	".mov": "video/quicktime", ".mkv": "video/x-matroska", ".avi": "video/x-msvideo",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
}

// isSafeType reports whether a bare, lower-case media type is served without risk.
func isSafeType(t string) bool {
	if safeTypes[t] {
		return true
	}
	if t == "image/svg+xml" {
		return false
	}
	for _, p := range []string{"image/", "audio/", "video/", "font/"} {
		if strings.HasPrefix(t, p) && len(t) > len(p) {
			return true
		}
	}
	return false
}

// SanitizeContentType returns the content type to store and serve (wire-core §7.1): the client's
// type, without parameters and in lower case, when it is safe; else the type of the filename's
// extension when that is safe; else application/octet-stream. Types that can run script in a
// browser (text/html, image/svg+xml, application/javascript, …) are never kept.
func SanitizeContentType(contentType, filename string) string {
	if t, _, err := mime.ParseMediaType(contentType); err == nil && isSafeType(t) {
		return t
	}
	return TypeByExtension(filename)
}

// TypeByExtension returns the safe content type of a file name's extension, or
// application/octet-stream.
func TypeByExtension(name string) string {
	if t, ok := extensionTypes[strings.ToLower(filepath.Ext(name))]; ok {
		return t
	}
	return "application/octet-stream"
}

// inlineType reports whether a type is shown in the browser (Content-Disposition inline) rather
// than downloaded (wire-core §7.7).
func inlineType(t string) bool {
	if t == "application/pdf" {
		return true
	}
	for _, p := range []string{"image/", "audio/", "video/", "font/"} {
		if strings.HasPrefix(t, p) {
			return t != "image/svg+xml"
		}
	}
	return false
}

// String describes the claim for logs, without its owner.
func (c *Claim) String() string {
	return fmt.Sprintf("claim %s (%s, %s)", c.ID, c.Key, c.Status)
}
