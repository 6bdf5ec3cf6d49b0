// Package replaydiff compares a candidate reconciler's answers with recorded ones, offline:
// each request of a recording (ork run --record, ork simulate --record) goes to the
// candidate again as a dry run, and its answer is compared with the recorded answer as ork
// run's shadow mode compares a candidate's with the stable reconciler's.
package replaydiff

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/rollout"
)

// Options select what to compare.
type Options struct {
	// Dir is the recording's directory; required.
	Dir string
	// Candidate is the candidate's URL; default the Katalog's candidate.endpoint.
	Candidate string
	// Secrets reads the candidate's auth.secretRef; required when it is declared.
	Secrets remote.SecretSource
	// IncludeDelete sends recorded deletes too; default the candidate's shadowDeletes, as
	// live shadow mode: a reconciler may clean up outside the cluster whatever dryRun says.
	IncludeDelete bool
}

// Report is the comparison; -o json prints it as is.
type Report struct {
	CRD string `json:"crd"`
	// Exchanges are the recorded exchanges of the CRD; Compared those with a recorded
	// successful answer and a successful candidate answer; Divergences those that differ.
	Exchanges   int `json:"exchanges"`
	Compared    int `json:"compared"`
	Divergences int `json:"divergences"`
	Errors      int `json:"errors"`
	// SkippedDeletes are the recorded deletes not sent (no shadowDeletes, no IncludeDelete).
	SkippedDeletes int      `json:"skippedDeletes,omitempty"`
	Results        []Result `json:"results"`
}

// Result is one recorded exchange sent again.
type Result struct {
	File    string `json:"file"`
	Key     string `json:"key"`
	Trigger string `json:"trigger"`
	// Reason is the candidate's pass reason (ReconcileSucceeded on success).
	Reason string `json:"reason"`
	// Compared is false when the recorded answer was no success: nothing to compare with.
	Compared bool `json:"compared"`
	// Divergences are the differing field paths, never values.
	Divergences []string `json:"divergences"`
	// skipped: a recorded delete, not sent.
	skipped bool
}

// Run sends every recorded request of crd in opts.Dir to the candidate and compares.
func Run(ctx context.Context, crd *katalog.CRD, opts Options) (Report, error) {
	rem := crd.OperatorBox.Reconcile.Remote
	if rem == nil {
		return Report{}, fmt.Errorf("CRD %q has no reconcile.remote", crd.Name)
	}
	spec := katalog.Candidate{Endpoint: opts.Candidate}
	if rem.Candidate != nil {
		spec = *rem.Candidate
		if opts.Candidate != "" {
			spec.Endpoint = opts.Candidate
		}
	}
	if spec.Endpoint == "" {
		return Report{}, fmt.Errorf("CRD %q has no reconcile.remote.candidate: name the candidate's URL", crd.Name)
	}
	c := *crd
	r := *rem
	r.Endpoint, r.Candidate = spec.Endpoint, nil
	if spec.Auth != nil {
		r.Auth = spec.Auth
	}
	if spec.Timeout != "" {
		r.Timeout = spec.Timeout
	}
	c.OperatorBox.Reconcile.Remote = &r
	cand, err := remote.New(&c, remote.Options{Secrets: opts.Secrets})
	if err != nil {
		return Report{}, fmt.Errorf("candidate reconciler: %w", err)
	}
	defer cand.Close()
	names, err := filepath.Glob(filepath.Join(opts.Dir, "*.json"))
	if err != nil || len(names) == 0 {
		return Report{}, fmt.Errorf("replay %s: no recorded exchange (*.json)", opts.Dir)
	}
	rep := Report{CRD: crd.Name, Results: []Result{}}
	deletes := opts.IncludeDelete || spec.ShadowDeletes
	for _, name := range names {
		res, ok, err := compare(ctx, crd, cand, name, deletes)
		if err != nil {
			return rep, err
		}
		if !ok {
			continue // another CRD's exchange
		}
		if res.skipped {
			rep.SkippedDeletes++
			continue
		}
		rep.Exchanges++
		if res.Reason != remote.ReasonReconcileSucceeded {
			rep.Errors++
		}
		if res.Compared {
			rep.Compared++
			if len(res.Divergences) > 0 {
				rep.Divergences++
			}
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// compare sends one recorded exchange's request to the candidate; ok is false when the
// exchange is another CRD's.
func compare(ctx context.Context, crd *katalog.CRD, cand *remote.Reconciler, file string, deletes bool) (Result, bool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Result{}, false, fmt.Errorf("replay: %w", err)
	}
	var e exchange.Entry
	if err := json.Unmarshal(b, &e); err != nil {
		return Result{}, false, fmt.Errorf("replay %s: %w", file, err)
	}
	group, kind, err := remote.GroupKindOf(e.Request)
	if err != nil {
		return Result{}, false, fmt.Errorf("replay %s: %w", file, err)
	}
	if at := crd.APITypes; at == nil || at.Group != group || at.Kind != kind {
		return Result{}, false, nil
	}
	req, err := remote.RequestOf(e.Request)
	if err != nil {
		return Result{}, false, fmt.Errorf("replay %s: %w", file, err)
	}
	req.DryRun = true
	res := Result{File: filepath.Base(file), Key: e.Key, Trigger: e.Trigger, Divergences: []string{}}
	if md, _ := req.Object["metadata"].(map[string]any); !deletes && (req.Trigger == remote.TriggerDelete || md["deletionTimestamp"] != nil) {
		res.skipped = true
		return res, true, nil
	}
	cres, _, cerr := cand.Call(ctx, req)
	res.Reason = remote.Decide(cres, cerr).Reason
	if cerr != nil || e.StatusCode != http.StatusOK {
		return res, true, nil
	}
	stableRes, err := remote.DecodeResult(e.Response)
	if err != nil {
		return res, true, nil // a recorded answer ork refused: nothing to compare with
	}
	md, _ := req.Object["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	paths, compared, failed := rollout.Compare(stableRes, cres, ns, name)
	if failed != "" {
		res.Reason = failed
	}
	if compared {
		res.Compared = true
		res.Divergences = paths
	}
	return res, true, nil
}
