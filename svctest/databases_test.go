package svctest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/svctest"
)

// TestDataSourceIsolation checks that two data sources of one kind in one test are separate:
// a table created through one is invisible through the other.
func TestDataSourceIsolation(t *testing.T) {
	svctest.EachDB(t, func(t *testing.T, first *db.DB) {
		t.Parallel()
		second := svctest.NewDB(t, first.Kind)
		if _, err := first.ExecContext(t.Context(), "CREATE TABLE only_in_first (id INTEGER)"); err != nil {
			t.Fatalf("create: %v", err)
		}
		if _, err := second.ExecContext(t.Context(), "SELECT COUNT(*) FROM only_in_first"); err == nil {
			t.Error("a table of the first database is visible through the second")
		}
		ds := svctest.DataSource(t, first.Kind)
		switch first.Kind {
		case config.Postgres:
			if !strings.HasPrefix(ds.Schema, "t_") || ds.Schema == first.Schema {
				t.Errorf("postgres schema = %q (first %q), want a fresh t_ schema", ds.Schema, first.Schema)
			}
		case config.MySQL:
			if !strings.HasPrefix(ds.Database, "t_") {
				t.Errorf("mysql database = %q, want a fresh t_ database", ds.Database)
			}
		}
	})
}

func TestUniquePrefix(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, name := range []string{"a", "a b", "a_b", "long/" + strings.Repeat("x", 60)} {
		t.Run(name, func(t *testing.T) {
			p := svctest.UniquePrefix(t)
			if p != svctest.UniquePrefix(t) {
				t.Errorf("UniquePrefix changed between calls in one test")
			}
			if strings.ContainsAny(p, "*?[] ") {
				t.Errorf("UniquePrefix = %q, has glob or space characters", p)
			}
			if other, dup := seen[p]; dup {
				t.Errorf("UniquePrefix(%s) = UniquePrefix(%s) = %q", t.Name(), other, p)
			}
			seen[p] = t.Name()
		})
	}
}

// TestRedisCleansUpPrefix checks that Redis deletes the keys under the test's prefix at the end
// of the test and leaves other keys alone.
func TestRedisCleansUpPrefix(t *testing.T) {
	t.Parallel()
	outer := svctest.Redis(t)
	keep := svctest.UniquePrefix(t) + "keep"
	if err := outer.Set(t.Context(), keep, "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var inner string
	t.Run("inner", func(t *testing.T) {
		client := svctest.Redis(t)
		inner = svctest.UniquePrefix(t) + "k"
		for _, k := range []string{inner + "1", inner + "2"} {
			if err := client.Set(t.Context(), k, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
	if n, err := outer.Exists(t.Context(), inner+"1", inner+"2").Result(); err != nil || n != 0 {
		t.Errorf("keys of the finished subtest = %d, %v; want 0 left", n, err)
	}
	if n, err := outer.Exists(t.Context(), keep).Result(); err != nil || n != 1 {
		t.Errorf("key of the running test = %d, %v; want it kept", n, err)
	}
}

func TestS3(t *testing.T) {
	t.Setenv(svctest.EnvS3Endpoint, "https://s3.example:9000/")
	t.Setenv(svctest.EnvS3AccessKey, "access")
	t.Setenv(svctest.EnvS3SecretKey, "secret")
	t.Setenv(svctest.EnvS3Region, "")
	a, b := svctest.S3(t), svctest.S3(t)
	want := svctest.S3Config{Endpoint: "s3.example:9000", AccessKey: "access", SecretKey: "secret", Region: "us-east-1", UseSSL: true}
	got := a
	got.Bucket = ""
	if got != want {
		t.Errorf("S3 = %+v, want %+v", got, want)
	}
	if a.Bucket == b.Bucket || !strings.HasPrefix(a.Bucket, "svctest-") || len(a.Bucket) > 63 {
		t.Errorf("buckets %q and %q: want distinct svctest- names of at most 63 characters", a.Bucket, b.Bucket)
	}
}

// TestRequireServiceRule runs itself in a child process without any S3 settings: the child is
// skipped normally, and fails when SVC_TEST_REQUIRE_SERVICES=1; both name the missing variable.
func TestRequireServiceRule(t *testing.T) {
	if os.Getenv("SVCTEST_CHILD") == "1" {
		svctest.S3(t)
		t.Log("S3 returned without settings")
		return
	}
	t.Parallel()
	var env []string
	for _, kv := range svctest.ChildEnv() {
		if !strings.HasPrefix(kv, "SVC_TEST_") {
			env = append(env, kv)
		}
	}
	for _, tt := range []struct {
		require  string
		wantFail bool
		wantOut  string
	}{
		{"", false, "--- SKIP"},
		{"1", true, "--- FAIL"},
	} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestRequireServiceRule$", "-test.v")
		cmd.Env = append(env, "SVCTEST_CHILD=1", svctest.EnvRequireServices+"="+tt.require)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tt.wantFail {
			t.Errorf("require=%q: child failed = %v (%v), want %v\n%s", tt.require, failed, err, tt.wantFail, out)
		}
		for _, want := range []string{tt.wantOut, svctest.EnvS3Endpoint + " is not set"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("require=%q: child output lacks %q:\n%s", tt.require, want, out)
			}
		}
	}
}
