package rpc

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/textproto"
)

// Call is what a handler knows about the request beyond its typed params.
type Call struct {
	Resource  string
	Action    string
	Version   string
	Principal *Principal      // never nil: anonymous for public operations
	ClientIP  string          // resolved through svc.app.trusted_proxies
	RequestID string          // the X-Request-ID of the response
	Meta      json.RawMessage // the envelope's meta object ({} when absent)
	Request   *http.Request   // the underlying request (headers, remote address)
	Header    http.Header     // response headers the handler may add to
	Logger    *slog.Logger    // request-scoped logger (request id, resource, action)
	Files     FileSource      // file parts of a multipart envelope; nil for JSON requests
}

// File is one file part of a multipart envelope, readable as a stream. It is valid only during the
// handler call; the engine closes and removes whatever backs it afterwards.
type File interface {
	io.Reader
	// Field is the form field name (e.g. "file").
	Field() string
	// Filename is the client-supplied file name.
	Filename() string
	// Header is the part's MIME header.
	Header() textproto.MIMEHeader
	// Size is the size in bytes when known before reading, or -1 while streaming.
	Size() int64
}

// FileSource hands out the file parts of a multipart envelope.
type FileSource interface {
	// File returns the first file part with the given field name, or ok=false if there is none.
	File(field string) (f File, ok bool, err error)
}
