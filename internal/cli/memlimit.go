package cli

import (
	"log/slog"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// memoryLimitRatio is the share of the container's memory limit given to the Go runtime as
// its soft limit: the collector runs harder as the heap nears it, well before the kernel
// would kill the container, and the rest is room for what the runtime does not count
// (the binary's pages, thread stacks).
const memoryLimitRatio = 0.9

// setMemoryLimit gives the Go runtime a soft memory limit from the container's cgroup
// limit (docs/operations.md, "Memory"). GOMEMLIMIT set by hand wins; AUTOMEMLIMIT=off
// turns it off. No limit (a laptop, a pod without one) means no soft limit either.
func setMemoryLimit(logger *slog.Logger, limit memlimit.Provider) {
	got, err := memlimit.Set(memlimit.WithRatio(memoryLimitRatio), memlimit.WithProvider(limit))
	switch {
	case err != nil:
		logger.Debug("no memory limit for the Go runtime from the container", "err", err)
	default:
		logger.Debug("Go runtime memory limit", "bytes", got)
	}
}
