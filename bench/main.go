// Command bench measures ork against the apiserver's own limit, in one run: for each
// workload and N, a fresh control plane per system, N custom resources created at once, and
// the time until every one is Ready with its children. Two ceilings are measured in the same
// run (bench/ceiling.go): (a) the workload's writes only, answered as metadata, at two worker
// counts, the faster being the limit targets are stated against; (b) the requests ork makes
// per CR. ork runs with its default flags. -runs (BENCH_RUNS) repeats it all; a target is met
// when the median share of ceiling (a) meets it.
//
//	go run ./bench -n 1000,2000                          # or: make bench
//	go run ./bench -workload fanout10,fanout20,multicrd  # children per CR, CRDs per Katalog
//	go run ./bench -workload startup -ork-before /tmp/ork-base
//	go run ./bench -memory 1000,5000,10000               # memory per cached object
//	go run ./bench -shard 1,2,4 -n 5000 -runs 3          # sharded rings (ork run --shard-buckets), medians
//	go run ./bench -restart 2000 -runs 3                 # restart catch-up with and without skipUnchanged
//
// It prints the tables, writes results.json and convergence-*.svg to -out.
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
	sizes []int
	// startupSizes are the startup workload's N: -n if given, else 5,000.
	startupSizes []int
	systems      []system
	workloads    []workload
	runs         int
	target       float64
	memory       []int
	idle         time.Duration
	timeout      time.Duration
	out          string
	// profile is how long to take ork's CPU profile for, from the first create; 0 for none.
	profile time.Duration
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	sizes := fs.String("n", "1000,2000", "numbers of custom resources, comma-separated (the startup workload: 5000 unless given)")
	systems := fs.String("systems", "ceiling,ork,controller-runtime,controller-runtime-32",
		"systems to measure: ceiling (both ceilings), ceiling-a, ceiling-b, ork, controller-runtime, controller-runtime-32")
	ceilingWorkers := fs.String("ceiling-workers", "32,64", "ceiling (a)'s worker counts; the faster is ceiling (a)")
	workload := fs.String("workload", "default", "workloads, comma-separated: default, fanout10, fanout20, multicrd, startup")
	runs := fs.Int("runs", envInt("BENCH_RUNS", 1), "repeat the whole measurement this many times (default $BENCH_RUNS, else 1); medians and spreads are over the runs")
	target := fs.Float64("target", 0.90, "the share of ceiling (a) a system's median must reach for the target to be met")
	memory := fs.String("memory", "", "instead: ork's memory at these numbers of CRs (e.g. 1000,5000,10000)")
	shards := fs.String("shard", "", "instead: rings of ork run --shard-buckets with these numbers of replicas (e.g. 1,2,4) over -n CRs (default 5000): catch-up, RSS per replica, Lease writes at rest, failover")
	restart := fs.Int("restart", 0, "instead: ork restarted over this many converged CRs (e.g. 2000), its catch-up without and with reconcile.remote.skipUnchanged")
	idle := fs.Duration("idle", 30*time.Second, "how long to watch ork idle after convergence")
	timeout := fs.Duration("timeout", 15*time.Minute, "bound on one convergence")
	out := fs.String("out", "bench-results", "directory for results.json and the plots")
	orkBin := fs.String("ork", "", "measure this ork binary instead of building ./cmd/ork (e.g. an older commit's, for a before/after)")
	orkBefore := fs.String("ork-before", "", "startup workload: also measure this ork binary, as ork-before, in the same run")
	profile := fs.Duration("profile", 0, "take ork's CPU profile for this long from the first create (ork-cpu-<workload>-<N>.pprof; go tool pprof); with -memory, save its heap at rest instead (ork-heap-memory-<N>.pprof)")
	mode := fs.String("mode", "", "internal: ceiling or operator")
	ceiling := fs.String("ceiling", ceilingA, "internal: the ceiling's kind, a or b")
	workers := fs.Int("workers", 1, "internal: the ceiling's goroutines, the operator's MaxConcurrentReconciles")
	healthAddr := fs.String("health-addr", "", "internal: the ceiling's and the operator's health probe address")
	kubeconfig := fs.String("kubeconfig", "", "internal: the ceiling's cluster")
	namespace := fs.String("namespace", "", "internal: the ceiling's and the operator's namespace")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o := options{idle: *idle, timeout: *timeout, out: *out, profile: *profile, runs: *runs, target: *target}
	var err error
	if o.workloads, err = parseWorkloads(*workload); err != nil {
		return fmt.Errorf("-workload: %w", err)
	}
	switch *mode {
	case "ceiling":
		return runCeiling(ctx, *kubeconfig, *namespace, *ceiling, *workers, o.workloads[0], *healthAddr, os.Stdin)
	case "operator":
		return runOperator(ctx, benchGroup, *namespace, *workers, *healthAddr)
	}
	if o.runs < 1 {
		return fmt.Errorf("-runs: %d is not a positive number", o.runs)
	}
	if o.sizes, err = ints(*sizes); err != nil {
		return fmt.Errorf("-n: %w", err)
	}
	o.startupSizes = []int{5000}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "n" {
			o.startupSizes = o.sizes
		}
	})
	aWorkers, err := ints(*ceilingWorkers)
	if err != nil || len(aWorkers) == 0 {
		return fmt.Errorf("-ceiling-workers: %q: %v", *ceilingWorkers, err)
	}
	if o.systems, err = expandSystems(strings.Split(*systems, ","), aWorkers); err != nil {
		return fmt.Errorf("-systems: %w", err)
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
	if *restart > 0 {
		return measureRestart(ctx, bin, *restart, o)
	}
	if *shards != "" {
		replicas, err := ints(*shards)
		if err != nil {
			return fmt.Errorf("-shard: %w", err)
		}
		return measureShards(ctx, bin, replicas, o.startupSizes[0], o)
	}
	fmt.Fprintf(os.Stderr, "bench: %d run(s), target %.2f of ceiling (a)\n", o.runs, o.target)
	return measureAll(ctx, map[systemKind]string{kindOrk: bin, kindOrkBefore: *orkBefore}, o, os.Stderr)
}

// envInt is the environment variable name as a number, or def when it is unset or not one.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
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
