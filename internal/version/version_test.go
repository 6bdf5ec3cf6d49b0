package version

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}}
	for _, tc := range []struct {
		name    string
		stamped Info
		bi      *debug.BuildInfo
		want    Info
	}{
		{"a go install'ed binary reports its module version",
			Info{Version: "dev"}, &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.4.0"}},
			Info{Version: "v1.4.0", GoVersion: "go1.26.1"}},
		{"a pseudo-version is reported as it is",
			Info{Version: "dev"}, &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102030405-abcdefabcdef"}, Settings: vcs},
			Info{Version: "v0.0.0-20260102030405-abcdefabcdef", Commit: "abc123", Date: "2026-01-02T03:04:05Z"}},
		{"(devel) is no version: dev stays",
			Info{Version: "dev"}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			Info{Version: "dev", Commit: "abc123", Date: "2026-01-02T03:04:05Z"}},
		{"the linker's stamp wins over the build info",
			Info{Version: "v2.0.0", Commit: "feed", Date: "2026-05-06T00:00:00Z"},
			&debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}, Settings: vcs},
			Info{Version: "v2.0.0", Commit: "feed", Date: "2026-05-06T00:00:00Z"}},
		{"no build info: the stamp alone",
			Info{Version: "dev"}, nil, Info{Version: "dev"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolve(tc.stamped, tc.bi)
			want := tc.want
			want.Platform = runtime.GOOS + "/" + runtime.GOARCH
			if want.GoVersion == "" {
				want.GoVersion = runtime.Version()
			}
			if got != want {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}
