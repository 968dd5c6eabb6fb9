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

// Unknown is reported for build values that were neither linked in nor found in the build info.
const Unknown = "unknown"

// Build describes the running binary (sys/monitor get_build_info, `svc version`).
type Build struct {
	FrameworkVersion string `json:"frameworkVersion"`
	AppVersion       string `json:"appVersion"`
	BuildTime        string `json:"buildTime"`
	GitCommit        string `json:"gitCommit"`
	GoVersion        string `json:"-"`
}

var buildOnce = sync.OnceValue(readBuild)

// BuildInfo returns the version data of the running binary: link-time values first, then the
// module and VCS data Go embeds in every binary, then "unknown".
func BuildInfo() Build { return buildOnce() }

func readBuild() Build {
	b := Build{FrameworkVersion: Unknown, AppVersion: appVersion, BuildTime: buildTime, GitCommit: gitCommit}
	info, ok := debug.ReadBuildInfo()
	if ok {
		b.GoVersion = info.GoVersion
		if info.Main.Path == FrameworkModule {
			b.FrameworkVersion = info.Main.Version
			if b.AppVersion == "" {
				b.AppVersion = info.Main.Version
			}
		} else {
			for _, dep := range info.Deps {
				if dep.Path == FrameworkModule {
					b.FrameworkVersion = dep.Version
				}
			}
			if b.AppVersion == "" {
				b.AppVersion = info.Main.Version
			}
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
			}
		}
	}
	for _, p := range []*string{&b.FrameworkVersion, &b.AppVersion, &b.BuildTime, &b.GitCommit} {
		if *p == "" || *p == "(devel)" {
			*p = Unknown
		}
	}
	return b
}
