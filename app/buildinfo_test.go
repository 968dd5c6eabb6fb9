package app

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildFrom(t *testing.T) {
	t.Parallel()
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "f41e011c0ffee"},
		{Key: "vcs.time", Value: "2026-11-23T18:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name   string
		info   *debug.BuildInfo
		linked Build
		want   Build
	}{
		{
			name: "no build info",
			want: Build{VefVersion: Unknown, FrameworkVersion: Unknown, AppVersion: Unknown, BuildTime: Unknown, GitCommit: Unknown},
		},
		{
			name: "go build in a checkout of svc: pseudo-version and VCS stamp",
			info: &debug.BuildInfo{GoVersion: "go1.26.8",
				Main:     debug.Module{Path: FrameworkModule, Version: "v0.0.0-20261123180000-f41e011c0ffe+dirty"},
				Settings: vcs},
			want: Build{VefVersion: "v0.0.0-20261123180000-f41e011c0ffe+dirty", FrameworkVersion: "v0.0.0-20261123180000-f41e011c0ffe+dirty",
				AppVersion: "v0.0.0-20261123180000-f41e011c0ffe+dirty", BuildTime: "2026-11-23T18:00:00Z",
				GitCommit: "f41e011c0ffee", GitModified: true, GoVersion: "go1.26.8"},
		},
		{
			name: "go build with -buildvcs=false: (devel) and no VCS",
			info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: FrameworkModule, Version: "(devel)"}},
			want: Build{VefVersion: Unknown, FrameworkVersion: Unknown, AppVersion: Unknown, BuildTime: Unknown,
				GitCommit: Unknown, GoVersion: "go1.26.8"},
		},
		{
			name: "go install of a tagged release",
			info: &debug.BuildInfo{Main: debug.Module{Path: FrameworkModule, Version: "v1.4.2"}},
			want: Build{VefVersion: "v1.4.2", FrameworkVersion: "v1.4.2", AppVersion: "v1.4.2", BuildTime: Unknown, GitCommit: Unknown},
		},
		{
			name: "host application depending on a replaced svc",
			info: &debug.BuildInfo{Main: debug.Module{Path: "example.com/host", Version: "v2.0.0"},
				Deps: []*debug.Module{{Path: "example.com/other", Version: "v1.0.0"},
					{Path: FrameworkModule, Version: "v1.3.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.3.1"}}},
				Settings: vcs[:3]},
			want: Build{VefVersion: "v1.3.1", FrameworkVersion: "v1.3.1", AppVersion: "v2.0.0",
				BuildTime: "2026-11-23T18:00:00Z", GitCommit: "f41e011c0ffee"},
		},
		{
			name: "link-time values win",
			info: &debug.BuildInfo{Main: debug.Module{Path: "example.com/host", Version: "v2.0.0"},
				Deps: []*debug.Module{{Path: FrameworkModule, Version: "v1.3.0"}}, Settings: vcs},
			linked: Build{AppVersion: "2.0.1", BuildTime: "2026-11-24T08:00:00Z", GitCommit: "abc"},
			want: Build{VefVersion: "v1.3.0", FrameworkVersion: "v1.3.0", AppVersion: "2.0.1",
				BuildTime: "2026-11-24T08:00:00Z", GitCommit: "abc", GitModified: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, buildFrom(tt.info, tt.linked)); diff != "" {
				t.Errorf("buildFrom mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShown: a value nothing recorded reads "development build"; a recorded one is unchanged.
func TestShown(t *testing.T) {
	t.Parallel()
	devel := buildFrom(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: FrameworkModule, Version: "(devel)"}}, Build{})
	for _, v := range []string{devel.FrameworkVersion, devel.AppVersion, devel.BuildTime, devel.GitCommit, ""} {
		if got := Shown(v); got != DevelopmentBuild {
			t.Errorf("Shown(%q) = %q, want %q", v, got, DevelopmentBuild)
		}
	}
	if got := Shown("v1.4.2"); got != "v1.4.2" {
		t.Errorf("Shown(v1.4.2) = %q, want it unchanged", got)
	}
}
