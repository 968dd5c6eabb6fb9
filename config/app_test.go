package config

import (
	"errors"
	"testing"
)

// TestListenAddress: svc.app.host and svc.app.port make the listener's address; the empty
// default keeps every interface, and SVC_APP_HOST sets the host like any key.
func TestListenAddress(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		host string
		want string
	}{
		{"default: every interface", "", ":8080"},
		{"IPv4 loopback", "127.0.0.1", "127.0.0.1:8080"},
		{"IPv6 loopback", "::1", "[::1]:8080"},
		{"host name", "localhost", "localhost:8080"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := App{Host: tt.host, Port: 8080}
			if errs := a.validate(); len(errs) > 0 {
				t.Fatalf("validate: %v", errs)
			}
			if got := a.ListenAddress(); got != tt.want {
				t.Errorf("ListenAddress() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestHostFromEnvironment: SVC_APP_HOST overrides the file, and a bad value is a startup error
// naming the key.
func TestHostFromEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeConfig(t, dir, "[svc.app]\nport = 8080\nhost = \"0.0.0.0\"\n[svc.data_sources.primary]\ntype = \"sqlite\"\npath = \"x.db\"\n")
	cfg, _, err := Load(LoadOptions{Dirs: []string{dir}, Env: envOf(map[string]string{"SVC_APP_HOST": "127.0.0.1"})})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.App.ListenAddress(), "127.0.0.1:8080"; got != want {
		t.Errorf("ListenAddress() = %q, want %q", got, want)
	}
	cfg, _, err = Load(LoadOptions{Dirs: []string{dir}, Env: envOf(map[string]string{"SVC_APP_HOST": "127.0.0.1:9000"})})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("SVC_APP_HOST=127.0.0.1:9000: err = %v, want ErrInvalidValue", err)
	}
}
