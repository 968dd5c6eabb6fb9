package config

import (
	"errors"
	"testing"
)

// TestAdminAddress: the admin listener is checked only when it opens, and must be host:port on
// a port other than svc.app.port.
func TestAdminAddress(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		address string
		metrics bool
		wantErr bool
	}{
		{"off: not checked", "nonsense", false, false},
		{"default", DefaultAdminAddress, true, false},
		{"not host:port", "9464", true, true},
		{"public port", "0.0.0.0:8080", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			c.App.Port = 8080
			c.Admin.Address, c.Metrics.Enabled = tt.address, tt.metrics
			errs := c.validateAdmin()
			if got := len(errs) > 0; got != tt.wantErr {
				t.Fatalf("validateAdmin(%q) = %v, want error %v", tt.address, errs, tt.wantErr)
			}
			if tt.wantErr && !errors.Is(errs[0], ErrInvalidValue) {
				t.Errorf("error %v does not wrap ErrInvalidValue", errs[0])
			}
		})
	}
}

// TestSampleRatioFromEnvironment: svc.tracing.sample_ratio takes a decimal from its variable.
func TestSampleRatioFromEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SVC_TRACING_SAMPLE_RATIO": "0.25"}
	cfg, _, err := Load(LoadOptions{Dirs: []string{t.TempDir()}, Embedded: []byte("[svc.tracing]\nenabled = true\n"),
		Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tracing.SampleRatio != 0.25 {
		t.Errorf("sample_ratio = %g, want 0.25", cfg.Tracing.SampleRatio)
	}
}
