package cli

import (
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// The container's memory limit becomes the runtime's soft limit at 90%; GOMEMLIMIT set by
// hand and AUTOMEMLIMIT=off leave the runtime's limit alone; no container limit means none.
func TestSetMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	for _, tc := range []struct {
		name, gomemlimit, automemlimit string
		limit                          memlimit.Provider
		want                           int64
	}{
		{name: "a container limit", limit: memlimit.Limit(512 * mib), want: 512 * mib * 9 / 10},
		{name: "GOMEMLIMIT set by hand", gomemlimit: "300MiB", limit: memlimit.Limit(512 * mib), want: 1234 * mib},
		{name: "turned off", automemlimit: "off", limit: memlimit.Limit(512 * mib), want: 1234 * mib},
		{name: "no limit", limit: func() (uint64, error) { return 0, memlimit.ErrNoLimit }, want: math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tc.gomemlimit)
			t.Setenv("AUTOMEMLIMIT", tc.automemlimit)
			if tc.automemlimit == "" {
				// Set looks at whether AUTOMEMLIMIT exists, not at its value.
				os.Unsetenv("AUTOMEMLIMIT")
			}
			debug.SetMemoryLimit(1234 * mib)
			setMemoryLimit(slog.New(slog.NewTextHandler(io.Discard, nil)), tc.limit)
			got := debug.SetMemoryLimit(-1)
			if got != tc.want {
				t.Errorf("memory limit = %d; want %d", got, tc.want)
			}
		})
	}
}
