package objstore_test

import (
	"context"
	"testing"

	"github.com/svc-framework/svc/internal/testservice"
	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/backend/backendtest"
	"github.com/svc-framework/svc/storage/objstore"
)

// newStore returns a started store on a fresh bucket of the test S3 server, emptied and removed
// when the test ends. The part size is the S3 minimum, to keep the suite's data small.
func newStore(t *testing.T) *objstore.Store {
	t.Helper()
	s3 := testservice.S3Server(t)
	s, err := objstore.New(objstore.Config{
		Endpoint: s3.Endpoint, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey,
		Bucket: s3.Bucket, Region: s3.Region, PartSize: objstore.MinPartSize,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testservice.RemoveBucket(t, s3) })
	return s
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend { return newStore(t) })
}

func TestInfo(t *testing.T) {
	s, err := objstore.New(objstore.Config{Endpoint: "http://127.0.0.1:1", Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	info := s.Info()
	if info.PartSize != objstore.PartSize || info.MaxParts != objstore.MaxParts || info.Bucket != "b" || !info.Multipart {
		t.Errorf("Info() = %+v, want part size %d, %d parts, bucket b", info, objstore.PartSize, objstore.MaxParts)
	}
	if _, err := objstore.New(objstore.Config{Endpoint: "x:1", Bucket: "b", PartSize: 1024}); err == nil {
		t.Errorf("New accepted a part size below the S3 minimum")
	}
}
