// Command bench measures ork against the apiserver's own limit, in one run: for each N, a
// fresh control plane per system, N custom resources created at once, and the time until
// every one is Ready with its children. The ceiling is a plain client-go program doing
// exactly ork's writes per CR (two server-side applies, one status patch) from 32
// goroutines with no client-side rate limit: the best this machine's apiserver can do, never
// throttled to ork's settings. ork runs with its default flags.
//
//	go run ./bench -n 1000,2000            # or: make bench
//	go run ./bench -memory 1000,5000,10000 # memory per cached object
//
// It prints a table, writes results.json and convergence-<N>.svg to -out.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func main() {
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime; not wanted here
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

type options struct {
	sizes   []int
	systems []string
	memory  []int
	idle    time.Duration
	timeout time.Duration
	out     string
	// profile is how long to take ork's CPU profile for, from the first create; 0 for none.
	profile time.Duration
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	sizes := fs.String("n", "1000,2000", "numbers of custom resources, comma-separated")
	systems := fs.String("systems", "ceiling,ork,controller-runtime,controller-runtime-32", "systems to measure, in order")
	memory := fs.String("memory", "", "instead: ork's memory at these numbers of CRs (e.g. 1000,5000,10000)")
	idle := fs.Duration("idle", 30*time.Second, "how long to watch ork idle after convergence")
	timeout := fs.Duration("timeout", 15*time.Minute, "bound on one convergence")
	out := fs.String("out", "bench-results", "directory for results.json and the plots")
	orkBin := fs.String("ork", "", "measure this ork binary instead of building ./cmd/ork (e.g. an older commit's, for a before/after)")
	profile := fs.Duration("profile", 0, "take ork's CPU profile for this long from the first create (ork-cpu-<N>.pprof; go tool pprof)")
	mode := fs.String("mode", "", "internal: ceiling or operator")
	workers := fs.Int("workers", 1, "internal: the operator's MaxConcurrentReconciles")
	healthAddr := fs.String("health-addr", "", "internal: the operator's health probe address")
	kubeconfig := fs.String("kubeconfig", "", "internal: the ceiling's cluster")
	namespace := fs.String("namespace", "", "internal: the ceiling's and the operator's namespace")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *mode {
	case "ceiling":
		return runCeiling(ctx, *kubeconfig, *namespace, benchGroup, os.Stdin)
	case "operator":
		return runOperator(ctx, benchGroup, *namespace, *workers, *healthAddr)
	}
	o := options{systems: strings.Split(*systems, ","), idle: *idle, timeout: *timeout, out: *out, profile: *profile}
	var err error
	if o.sizes, err = ints(*sizes); err != nil {
		return fmt.Errorf("-n: %w", err)
	}
	if o.memory, err = ints(*memory); err != nil {
		return fmt.Errorf("-memory: %w", err)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	bin := *orkBin
	if bin == "" {
		if bin, err = buildOrk(ctx, o.out); err != nil {
			return err
		}
	}
	if len(o.memory) > 0 {
		return measureMemory(ctx, bin, o)
	}
	return measureConvergence(ctx, bin, o)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// buildOrk builds ork as a release would (no race detector, trimmed), into dir.
func buildOrk(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "ork")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./cmd/ork")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build ork: %v\n%s", err, out)
	}
	return filepath.Abs(bin)
}
