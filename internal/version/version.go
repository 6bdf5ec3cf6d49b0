// Package version holds ork's build identity, set at link time by -ldflags -X.
package version

import "runtime/debug"

// Set by the release build: -X github.com/orkspace/ork/internal/version.Version=v1.2.3 etc.
var (
	Version = "dev"
	Commit  = ""
	Date    = ""
)

// Info is ork's build identity.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Date    string `json:"date"`
}

// Get returns the build identity; for a plain `go build` it falls back to the VCS stamp.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, Date: Date}
	if info.Commit != "" {
		return info
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.Date = s.Value
			}
		}
	}
	return info
}

// UserAgent is the User-Agent ork sends: ork/<version>.
func UserAgent() string { return "ork/" + Version }
