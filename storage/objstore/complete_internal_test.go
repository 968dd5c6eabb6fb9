package objstore

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-framework/svc/storage/backend"
)

// fakeCompleting is an S3 endpoint that answers every CompleteMultipartUpload with success, as
// versitygw does for a session whose assembly was claimed (and, after a crash of the server,
// never finished), and whose HEAD of the object answers 404 until missing HEADs have been made.
func fakeCompleting(t *testing.T, missing int64) *Store {
	t.Helper()
	var heads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Query().Has("uploadId"):
			w.Header().Set("Content-Type", "application/xml")
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUploadResult><Bucket>bkt</Bucket><Key>k</Key><ETag>"e-1"</ETag></CompleteMultipartUploadResult>`))
		case r.Method == http.MethodHead:
			if heads.Add(1) <= missing {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Length", "7")
			w.Header().Set("ETag", `"e-1"`)
			w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusOK)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			w.WriteHeader(http.StatusNotImplemented)
		}
	}))
	t.Cleanup(srv.Close)
	s, err := New(Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "secretsecret", Bucket: "bkt", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	grace, poll := completionGrace, completionPoll
	completionGrace, completionPoll = 300*time.Millisecond, 20*time.Millisecond
	t.Cleanup(func() { completionGrace, completionPoll = grace, poll })
	return s
}

// TestCompleteWithoutObjectIsSessionLost: a completion answered with success whose object never
// appears is a lost session (backend.ErrSessionNotFound), not an internal error on every retry.
func TestCompleteWithoutObjectIsSessionLost(t *testing.T) {
	s := fakeCompleting(t, 1<<30)
	_, err := s.CompleteMultipart(context.Background(), "k", "u1", []backend.Part{{Number: 1, ETag: "p1"}})
	if !errors.Is(err, backend.ErrSessionNotFound) {
		t.Fatalf("CompleteMultipart = %v, want ErrSessionNotFound", err)
	}
}

// TestCompleteWaitsForAssembly: an object that appears within the grace (an assembly still
// running when the completion was answered) is the completion's result.
func TestCompleteWaitsForAssembly(t *testing.T) {
	s := fakeCompleting(t, 3)
	obj, err := s.CompleteMultipart(context.Background(), "k", "u1", []backend.Part{{Number: 1, ETag: "p1"}})
	if err != nil || obj.Size != 7 || obj.ETag != "e-1" {
		t.Fatalf("CompleteMultipart = %+v, %v; want the 7-byte object", obj, err)
	}
}
