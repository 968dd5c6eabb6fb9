package testservice

import (
	"context"
	"os"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/storage/objstore"
)

// S3Config locates the S3-compatible server of the real-service tests.
type S3Config struct {
	// Endpoint is host:port, without scheme.
	Endpoint string
	// AccessKey and SecretKey are the credentials.
	AccessKey, SecretKey string
	// Bucket is a name unique to the test; creating it is the caller's job (RemoveBucket
	// removes it).
	Bucket string
	// Region is the signing region (SVC_TEST_S3_REGION, default us-east-1).
	Region string
	// UseSSL is true when the endpoint was given as an https:// URL.
	UseSSL bool
}

// ObjStore is c as the svc.storage.objstore section of a server's configuration.
func (c S3Config) ObjStore() config.ObjStore {
	return config.ObjStore{Endpoint: c.Endpoint, AccessKey: c.AccessKey, SecretKey: c.SecretKey, Bucket: c.Bucket,
		Region: c.Region, UseSSL: c.UseSSL}
}

// S3Server returns the S3 server of SVC_TEST_S3_ENDPOINT, SVC_TEST_S3_ACCESS_KEY and
// SVC_TEST_S3_SECRET_KEY with a fresh bucket name ("svctest-" and 16 hex digits, valid under the
// S3 naming rules). A missing variable skips the test, or fails it (Require).
func S3Server(t testing.TB) S3Config {
	t.Helper()
	cfg := S3Config{
		Endpoint:  Require(t, EnvS3Endpoint),
		AccessKey: Require(t, EnvS3AccessKey),
		SecretKey: Require(t, EnvS3SecretKey),
		Bucket:    "svctest-" + Suffix(8),
		Region:    os.Getenv(EnvS3Region),
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	cfg.Endpoint, cfg.UseSSL = objstore.NormalizeEndpoint(cfg.Endpoint, false)
	return cfg
}

// RemoveBucket deletes every object and open multipart upload of the bucket, then the bucket.
// A bucket that was never created is not an error; any other failure is reported on t.
func RemoveBucket(t testing.TB, s3 S3Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	c, err := minio.NewCore(s3.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""), Region: s3.Region, Secure: s3.UseSSL,
	})
	if err != nil {
		t.Errorf("testservice: s3 client: %v", err)
		return
	}
	if ok, err := c.Client.BucketExists(ctx, s3.Bucket); err == nil && !ok {
		return
	}
	for obj := range c.Client.ListObjects(ctx, s3.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err == nil {
			_ = c.Client.RemoveObject(ctx, s3.Bucket, obj.Key, minio.RemoveObjectOptions{})
		}
	}
	for up := range c.Client.ListIncompleteUploads(ctx, s3.Bucket, "", true) {
		if up.Err == nil {
			_ = c.AbortMultipartUpload(ctx, s3.Bucket, up.Key, up.UploadID)
		}
	}
	if err := c.Client.RemoveBucket(ctx, s3.Bucket); err != nil {
		t.Errorf("testservice: remove bucket %s: %v", s3.Bucket, err)
	}
}
