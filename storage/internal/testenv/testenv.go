// Package testenv gives the storage module's internal tests their real services: an isolated
// database of each kind and the S3 server, located by the same SVC_TEST_* variables and with the
// same skip-or-fail rule as package svctest. It exists because tests inside package storage
// cannot import svctest (svctest boots the whole server, which imports storage: an import
// cycle); API tests outside the package use svctest itself.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/internal/testservice"
)

const timeout = 30 * time.Second

// Require returns the value of the environment variable, skipping the test when it is unset or
// failing it under SVC_TEST_REQUIRE_SERVICES=1 (the shared rule of internal/testservice).
func Require(t testing.TB, name string) string {
	t.Helper()
	return testservice.Require(t, name)
}

// Suffix returns n random bytes in hex.
func Suffix(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Kinds are the database kinds every store test runs on.
var Kinds = []config.DBKind{config.SQLite, config.Postgres, config.MySQL}

// EachDB runs fn as a subtest per database kind with a fresh isolated database.
func EachDB(t *testing.T, fn func(t *testing.T, d *db.DB)) {
	t.Helper()
	for _, kind := range Kinds {
		t.Run(string(kind), func(t *testing.T) { fn(t, OpenDB(t, DataSource(t, kind))) })
	}
}

// OpenDB opens ds and closes it when the test ends.
func OpenDB(t testing.TB, ds config.DataSource) *db.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d, err := db.Open(ctx, config.PrimaryDataSource, ds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// DataSource returns a data source of kind that belongs to the test alone (a SQLite file, a
// PostgreSQL schema or a MySQL database), dropped when the test ends.
func DataSource(t testing.TB, kind config.DBKind) config.DataSource {
	t.Helper()
	name := "t_" + Suffix(8)
	switch kind {
	case config.SQLite:
		return config.DataSource{Type: config.SQLite, Path: filepath.Join(t.TempDir(), "svc.db")}
	case config.Postgres:
		u, err := url.Parse(Require(t, "SVC_TEST_POSTGRES_DSN"))
		if err != nil {
			t.Fatal(err)
		}
		port, _ := strconv.ParseUint(u.Port(), 10, 16)
		pw, _ := u.User.Password()
		ds := config.DataSource{Type: config.Postgres, Host: u.Hostname(), Port: uint16(port), User: u.User.Username(),
			Password: pw, Database: strings.TrimPrefix(u.Path, "/"), SSLMode: config.SSLMode(u.Query().Get("sslmode"))}
		isolate(t, ds, "CREATE SCHEMA "+name, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
		ds.Schema = name
		return ds
	case config.MySQL:
		cfg, err := mysql.ParseDSN(Require(t, "SVC_TEST_MYSQL_DSN"))
		if err != nil {
			t.Fatal(err)
		}
		host, portText, _ := net.SplitHostPort(cfg.Addr)
		port, _ := strconv.ParseUint(portText, 10, 16)
		ds := config.DataSource{Type: config.MySQL, Host: host, Port: uint16(port), User: cfg.User, Password: cfg.Passwd, Database: cfg.DBName}
		isolate(t, ds, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", "DROP DATABASE IF EXISTS "+name)
		ds.Database = name
		return ds
	}
	t.Fatalf("no test database of kind %q", kind)
	return config.DataSource{}
}

func isolate(t testing.TB, admin config.DataSource, create, drop string) {
	t.Helper()
	exec := func(stmt string) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		d, err := db.Open(ctx, "testenv-admin", admin)
		if err != nil {
			return err
		}
		defer d.Close()
		_, err = d.DB.DB.ExecContext(ctx, stmt)
		return err
	}
	if err := exec(create); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exec(drop); err != nil {
			t.Errorf("%s: %v", drop, err)
		}
	})
}

// S3 locates the S3 server of the real-service tests, with a bucket name unique to the test.
type S3 struct {
	Endpoint, AccessKey, SecretKey, Region, Bucket string
}

// S3Server returns the S3 settings from SVC_TEST_S3_*.
func S3Server(t testing.TB) S3 {
	t.Helper()
	s := S3{
		Endpoint:  Require(t, "SVC_TEST_S3_ENDPOINT"),
		AccessKey: Require(t, "SVC_TEST_S3_ACCESS_KEY"),
		SecretKey: Require(t, "SVC_TEST_S3_SECRET_KEY"),
		Region:    os.Getenv("SVC_TEST_S3_REGION"),
		Bucket:    "svctest-" + Suffix(8),
	}
	if s.Region == "" {
		s.Region = "us-east-1"
	}
	return s
}

// RemoveBucket deletes every object and open upload of the bucket, then the bucket.
func RemoveBucket(t testing.TB, s3 S3) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := minio.NewCore(s3.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s3.AccessKey, s3.SecretKey, ""), Region: s3.Region})
	if err != nil {
		t.Error(err)
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
		t.Errorf("remove bucket %s: %v", s3.Bucket, err)
	}
}
