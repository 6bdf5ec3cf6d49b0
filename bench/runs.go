package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// systemKind is what a measured system is.
type systemKind int

const (
	kindCeilingA systemKind = iota
	kindCeilingB
	kindOrk
	kindOrkBefore
	kindOperator
)

// system is one measured system: a name in the tables, what it is, and its workers (a
// ceiling's goroutines, the operator's MaxConcurrentReconciles).
type system struct {
	name    string
	kind    systemKind
	workers int
}

func (s system) isCeiling() bool { return s.kind == kindCeilingA || s.kind == kindCeilingB }

// expandSystems turns -systems into what is measured, in order: every ceiling first (the
// other systems' shares need ceiling (a), and (b) runs at the faster (a)'s worker count),
// ceiling (a) once per count of aWorkers. "ceiling" is both ceilings.
func expandSystems(names []string, aWorkers []int) ([]system, error) {
	var ceilings, others []system
	seen := map[string]bool{}
	add := func(to *[]system, s system) {
		if !seen[s.name] {
			seen[s.name] = true
			*to = append(*to, s)
		}
	}
	for _, n := range names {
		switch n = strings.TrimSpace(n); n {
		case "":
		case "ceiling", "ceiling-a", "ceiling-b":
			if n != "ceiling-b" {
				for _, wk := range aWorkers {
					add(&ceilings, system{name: fmt.Sprintf("ceiling-a-%d", wk), kind: kindCeilingA, workers: wk})
				}
			}
			if n != "ceiling-a" {
				add(&ceilings, system{name: "ceiling-b", kind: kindCeilingB, workers: aWorkers[0]})
			}
		case "ork":
			add(&others, system{name: n, kind: kindOrk})
		default:
			workers, ok := operatorSystems[n]
			if !ok {
				return nil, fmt.Errorf("unknown system %q (ceiling, ceiling-a, ceiling-b, ork, controller-runtime, controller-runtime-32)", n)
			}
			add(&others, system{name: n, kind: kindOperator, workers: workers})
		}
	}
	// (b) after every (a), whatever the order asked.
	var out []system
	for _, s := range ceilings {
		if s.kind == kindCeilingA {
			out = append(out, s)
		}
	}
	for _, s := range ceilings {
		if s.kind == kindCeilingB {
			out = append(out, s)
		}
	}
	return append(out, others...), nil
}

// supports reports whether sys runs workload w: the operator only has the default answer,
// and the startup workload times ork binaries only.
func supports(sys system, w workload) bool {
	switch {
	case w.startup:
		return sys.kind == kindOrk || sys.kind == kindOrkBefore
	case sys.kind == kindOrkBefore:
		return false
	case sys.kind == kindOperator:
		return w.name == "default"
	}
	return true
}

// measureAll runs the whole measurement o.runs times and reports.
func measureAll(ctx context.Context, bins map[systemKind]string, o options, log io.Writer) error {
	var all []result
	var notes []string
	for run := 1; run <= o.runs; run++ {
		for _, w := range o.workloads {
			sizes := o.sizes
			if w.startup {
				sizes = o.startupSizes
			}
			for _, n := range sizes {
				group, skipped, err := measureGroup(ctx, bins, w, n, o, log)
				if run == 1 {
					notes = append(notes, skipped...)
				}
				for i := range group {
					group[i].Run = run
				}
				all = append(all, group...)
				if err != nil {
					_ = writeResults(o.out, all) // what was measured so far is kept
					return fmt.Errorf("run %d, %s, N=%d: %w", run, w.name, n, err)
				}
			}
		}
	}
	return report(os.Stdout, o, all, notes)
}

// measureGroup measures every system on workload w at n, each on a fresh control plane, and
// sets their shares of ceiling (a). skipped says which systems do not run w.
func measureGroup(ctx context.Context, bins map[systemKind]string, w workload, n int, o options, log io.Writer) (group []result, skipped []string, err error) {
	systems := o.systems
	if w.startup {
		systems = []system{{name: "ork", kind: kindOrk}}
		if bins[kindOrkBefore] != "" {
			systems = append(systems, system{name: "ork-before", kind: kindOrkBefore})
		}
	}
	var bestA float64
	bWorkers := 0
	for _, sys := range systems {
		if !supports(sys, w) {
			note := fmt.Sprintf("%s on workload %s, N=%d (it answers the default workload only)", sys.name, w.name, n)
			fmt.Fprintln(log, "bench: skipped:", note)
			skipped = append(skipped, note)
			continue
		}
		if sys.kind == kindCeilingB && bWorkers > 0 {
			sys.workers = bWorkers
		}
		fmt.Fprintf(log, "bench: %s, %s, N=%d ...\n", w.name, sys.name, n)
		var r result
		if w.startup {
			r, err = measureStartup(ctx, bins[sys.kind], sys, w, n, o)
		} else {
			r, err = measure(ctx, bins[kindOrk], sys, w, n, o)
		}
		if err != nil {
			return group, skipped, fmt.Errorf("%s: %w", sys.name, err)
		}
		if sys.kind == kindCeilingA && (bestA == 0 || r.ConvergedSeconds < bestA) {
			bestA, bWorkers = r.ConvergedSeconds, sys.workers
		}
		fmt.Fprintf(log, "bench: %s, %s, N=%d: %s\n", w.name, sys.name, n, r.headline())
		group = append(group, r)
	}
	for i := range group {
		if bestA > 0 && group[i].ConvergedSeconds > 0 {
			group[i].ShareOfCeiling = bestA / group[i].ConvergedSeconds
		}
	}
	return group, skipped, nil
}

func (r result) headline() string {
	if r.EditToReadySeconds > 0 {
		return fmt.Sprintf("edit to Ready in %.1fs, backlog in %.1fs", r.EditToReadySeconds, r.BacklogSeconds)
	}
	return fmt.Sprintf("converged in %.1fs", r.ConvergedSeconds)
}
