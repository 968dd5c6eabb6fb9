package app

import (
	"runtime/debug"
	"sync"
)

// FrameworkModule is the module path of svc, looked up in the binary's build info to report the
// framework version a host application was built with.
const FrameworkModule = "github.com/svc-framework/svc"

// Set at link time by hosts and release builds, e.g.
//
//	go build -ldflags "-X github.com/svc-framework/svc/app.appVersion=1.4.2 \
//	  -X github.com/svc-framework/svc/app.buildTime=2026-11-22T10:00:00Z"
var (
	appVersion string
	buildTime  string
	gitCommit  string
)

// Unknown is reported for build values that were neither linked in nor found in the build info
// (the wire value of get_build_info; people are shown Shown's text instead).
const Unknown = "unknown"

// DevelopmentBuild is how a build value that nothing recorded is shown to people (`svc version`,
// the console's overview): `go run` and `go build -buildvcs=false` record no version, commit or
// time, and "unknown" read as a fault (issue #48).
const DevelopmentBuild = "development build"

// Shown is a build value as people read it: DevelopmentBuild for Unknown or empty, else v.
func Shown(v string) string {
	if v == "" || v == Unknown {
		return DevelopmentBuild
	}
	return v
}

// Build describes the running binary (sys/monitor get_build_info and get_overview.build,
// `svc version`). VefVersion repeats FrameworkVersion under the name the original's client
// reads (its monitor page shows build.vefVersion); both are always sent.
type Build struct {
	VefVersion       string `json:"vefVersion"`
	FrameworkVersion string `json:"frameworkVersion"`
	AppVersion       string `json:"appVersion"`
	BuildTime        string `json:"buildTime"`
	GitCommit        string `json:"gitCommit"`
	// GitModified is true when the binary was built from a work tree with uncommitted changes
	// (Go's vcs.modified); false when clean or unknown.
	GitModified bool   `json:"gitModified"`
	GoVersion   string `json:"-"`
}

var buildOnce = sync.OnceValue(func() Build {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return buildFrom(info, Build{AppVersion: appVersion, BuildTime: buildTime, GitCommit: gitCommit})
})

// BuildInfo returns the version data of the running binary: link-time values first, then the
// module and VCS data Go embeds in every binary, then "unknown".
func BuildInfo() Build { return buildOnce() }

// buildFrom completes the link-time values of linked from Go's embedded build information (nil
// when the binary has none): the framework's module version (the main module's when svc itself
// is the main module, else its dependency entry, replacement first), the main module's version as
// the app version, and the VCS revision, commit time and modified flag that `go build` records in
// a VCS checkout (-buildvcs, on by default). The commit time stands in for the build time when
// none was linked in. Empty values and Go's "(devel)" become Unknown.
func buildFrom(info *debug.BuildInfo, linked Build) Build {
	b := linked
	if info != nil {
		b.GoVersion = info.GoVersion
		if info.Main.Path == FrameworkModule {
			b.FrameworkVersion = info.Main.Version
		}
		for _, dep := range info.Deps {
			if dep.Path == FrameworkModule {
				b.FrameworkVersion = moduleVersion(dep)
			}
		}
		if b.AppVersion == "" {
			b.AppVersion = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.GitCommit == "" {
					b.GitCommit = s.Value
				}
			case "vcs.time":
				if b.BuildTime == "" {
					b.BuildTime = s.Value
				}
			case "vcs.modified":
				b.GitModified = b.GitModified || s.Value == "true"
			}
		}
	}
	for _, p := range []*string{&b.FrameworkVersion, &b.AppVersion, &b.BuildTime, &b.GitCommit} {
		if *p == "" || *p == "(devel)" {
			*p = Unknown
		}
	}
	b.VefVersion = b.FrameworkVersion
	return b
}

// moduleVersion is a dependency's effective version: its replacement's when replaced by another
// module version (a directory replacement has none, so the required version stands).
func moduleVersion(m *debug.Module) string {
	if m.Replace != nil && m.Replace.Version != "" {
		return m.Replace.Version
	}
	return m.Version
}
