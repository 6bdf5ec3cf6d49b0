// Package version holds ork's build identity, set at link time by -ldflags -X, else read from
// the build info the Go toolchain embeds (a `go install …@vX` binary carries its module version).
package version

import (
	"runtime"
	"runtime/debug"
)

// Set by the release build: -X github.com/orkspace/ork/internal/version.Version=v1.2.3 etc.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// unstamped is Version when no -ldflags -X set it.
const unstamped = "dev"

// Info is ork's build identity.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
	// GoVersion is the Go toolchain that built ork, e.g. go1.26.8.
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH of the binary, e.g. linux/amd64.
	Platform string `json:"platform"`
}

// Get returns the build identity: the linker's stamp where the release build set one, else
// what the Go toolchain recorded (module version, VCS revision and time).
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return resolve(Info{Version: Version, Commit: Commit, Date: Date}, bi)
}

// resolve fills what the linker left unset from bi (nil when the binary has none). The
// module version counts only when it is one: "(devel)" is what a build without a version
// (a plain `go build` outside a VCS checkout) records.
func resolve(stamped Info, bi *debug.BuildInfo) Info {
	info := stamped
	info.GoVersion, info.Platform = runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH
	if bi == nil {
		return info
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	if info.Version == unstamped && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	if info.Commit != "" {
		return info
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.Date = s.Value
		}
	}
	return info
}

// UserAgent is the User-Agent ork sends: ork/<version>.
func UserAgent() string { return "ork/" + Get().Version }
