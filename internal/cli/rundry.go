package cli

import (
	"sync"

	"github.com/orkspace/ork/internal/config"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/runplan"
)

// completeDryRun reads --dry-run, --watch, --include-deletes and -o. A dry run writes
// nothing, so it takes no Lease and installs no CRD; it serves no probes unless asked, as it
// may run beside the real ork on the same machine.
func completeDryRun(cfg *config.Config, opts *runOptions) error {
	format, err := outputFormat(cfg, output.Text, output.JSON)
	if err != nil {
		return err
	}
	opts.format = format
	e := &opts.engine
	e.DryRun, e.Watch, e.IncludeDeletes = cfg.Bool("dry-run"), cfg.Bool("watch"), cfg.Bool("include-deletes")
	if !e.DryRun {
		if e.Watch || e.IncludeDeletes {
			return usageError("--watch and --include-deletes go with --dry-run")
		}
		return nil
	}
	if e.LeaderElect || e.InstallCRDs || e.ShardBuckets != 0 {
		return usageError("--dry-run writes nothing: not with --leader-elect or --shard-buckets (Leases) or --install-crds")
	}
	if cfg.Source("health-addr") == "the default" {
		e.HealthAddr = ""
	}
	if cfg.Source("metrics-addr") == "the default" && !e.DebugDecisions && !e.Profiling {
		e.MetricsAddr = ""
	}
	return nil
}

// planPrinter prints a dry run's plans: each as its pass ends with --watch, else all at the
// end, sorted.
type planPrinter struct {
	env    *Env
	format output.Format
	watch  bool
	mu     sync.Mutex
	crs    []runplan.CR
	err    error
}

// newPlanPrinter returns the printer of a dry run, nil otherwise.
func newPlanPrinter(env *Env, opts runOptions) *planPrinter {
	if !opts.engine.DryRun {
		return nil
	}
	return &planPrinter{env: env, format: opts.format, watch: opts.engine.Watch}
}

// add takes one pass's plan (from the engine's workers).
func (p *planPrinter) add(cr runplan.CR) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.watch {
		// A custom resource changed during the run may pass twice: its last pass counts.
		for i, seen := range p.crs {
			if seen.CRD == cr.CRD && seen.Namespace == cr.Namespace && seen.Name == cr.Name {
				p.crs[i] = cr
				return
			}
		}
		p.crs = append(p.crs, cr)
		return
	}
	var err error
	if p.format == output.JSON {
		err = output.RunPlanJSONLine(p.env.Streams.Out, cr)
	} else {
		err = output.RunPlanCR(p.env.Streams.Out, p.env.Style(), cr)
	}
	if p.err == nil {
		p.err = err
	}
}

// flush prints the collected plans (without --watch) and reports a failed write.
func (p *planPrinter) flush() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watch {
		return p.err
	}
	runplan.Sort(p.crs)
	if p.format == output.JSON {
		return output.RunPlanJSON(p.env.Streams.Out, p.crs)
	}
	return output.RunPlan(p.env.Streams.Out, p.env.Style(), p.crs)
}
