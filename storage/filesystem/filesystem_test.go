package filesystem_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-framework/svc/storage/backend"
	"github.com/svc-framework/svc/storage/backend/backendtest"
	"github.com/svc-framework/svc/storage/filesystem"
)

func open(t *testing.T, dir string) *filesystem.Filesystem {
	t.Helper()
	return openWith(t, dir, filesystem.Options{})
}

func openWith(t *testing.T, dir string, opts filesystem.Options) *filesystem.Filesystem {
	t.Helper()
	f, err := filesystem.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func TestConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backend.Backend { return open(t, t.TempDir()) })
}

// TestConformanceSync runs the same suite with every part, object and directory synced (what
// survives a power loss cannot be tested here; that the synced paths behave alike can).
func TestConformanceSync(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return openWith(t, t.TempDir(), filesystem.Options{Sync: true})
	})
}

// TestNoEscape checks that neither keys, upload ids nor symbolic links reach outside the root.
func TestNoEscape(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(outside, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := open(t, root)
	ctx := context.Background()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.Get(ctx, "link/secret", nil); err == nil {
		t.Errorf("Get through a symlink to outside the root succeeded")
	}
	if _, err := f.Put(ctx, "link/new", bytes.NewReader([]byte("x")), 1, ""); err == nil {
		t.Errorf("Put through a symlink to outside the root succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created outside the root: %v", err)
	}
	for _, k := range []string{".svc-tmp/x", ".svc-multipart/x", "../outside/secret"} {
		if _, err := f.Put(ctx, k, bytes.NewReader([]byte("x")), 1, ""); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Put(%q) error = %v, want ErrInvalidKey", k, err)
		}
	}
	for _, id := range []string{"../../outside", "x-../../outside", ""} {
		if _, err := f.PutPart(ctx, "priv/a.bin", id, 1, bytes.NewReader([]byte("x")), 1); !errors.Is(err, backend.ErrSessionNotFound) {
			t.Errorf("PutPart(upload id %q) error = %v, want ErrSessionNotFound", id, err)
		}
	}
}

// TestNoLeftovers checks that completion and abort leave nothing in the temporary areas.
func TestNoLeftovers(t *testing.T) {
	t.Parallel()
	f := open(t, t.TempDir())
	ctx := context.Background()
	id, err := f.InitMultipart(ctx, "priv/x.bin", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.PutPart(ctx, "priv/x.bin", id, 1, bytes.NewReader([]byte("abc")), 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.CompleteMultipart(ctx, "priv/x.bin", id, []backend.Part{p}); err != nil {
		t.Fatal(err)
	}
	id2, err := f.InitMultipart(ctx, "priv/y.bin", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.AbortMultipart(ctx, "priv/y.bin", id2); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Sessions(); err != nil || n != 0 {
		t.Errorf("Sessions() = %d, %v; want 0", n, err)
	}
}
