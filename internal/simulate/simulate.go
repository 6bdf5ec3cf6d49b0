// Package simulate drives the declarative reconciler, and on request the remote one, against
// an in-memory cluster, cycle by cycle, and reports what each cycle changed and what the
// cluster holds at the end. It never prints.
package simulate

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/declarative"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
)

// DefaultCycles is the most reconcile cycles run when Options.Cycles is unset.
const DefaultCycles = 10

// Options select what to simulate.
type Options struct {
	// CRD limits the run to the CRD with this Katalog name; default: every CRD.
	CRD string
	// CRFile replaces the CRDs' crFiles (relative to the working directory, not the
	// Katalog); default: each CRD's own crFiles.
	CRFile string
	// Cycles is the most reconcile cycles per CR file; default DefaultCycles.
	Cycles int
	// Remote, when set, simulates remote CRDs too by calling their endpoint; default nil:
	// they are skipped (SkipRemote).
	Remote *RemoteOptions
	// Operator is the operator ork run would run as (ork run --name): the operator label
	// on every child, and so part of its applied digest; default naming.DefaultOperator.
	Operator string
}

// Report is the outcome of a simulation.
type Report struct {
	CRDs []CRD `json:"crds"`
	// Objects is what the in-memory clusters hold at the end (the CRs, the other objects of
	// the CR files, and what the reconciler made), CR file by CR file.
	Objects []*unstructured.Unstructured `json:"objects"`
}

// Skip says why a CRD was not simulated.
type Skip string

// Reasons a CRD is skipped.
const (
	// SkipRemote: reconcile.remote dispatches to an external endpoint at runtime, and
	// Options.Remote is not set.
	SkipRemote Skip = "remote"
	// SkipDisabled: reconcile.default is false and there is no remote reconciler.
	SkipDisabled Skip = "disabled"
	// SkipNoCRs: no custom resource of the CRD to reconcile (no crFiles, or none in --cr).
	SkipNoCRs Skip = "no-crs"
)

// CRD is the outcome for one CRD of the Katalog.
type CRD struct {
	Name string `json:"name"`
	// Skipped is empty when the CRD was simulated.
	Skipped Skip `json:"skipped,omitempty"`
	CRs     []CR `json:"crs,omitempty"`
}

// CR is the outcome for one custom resource.
type CR struct {
	// File is the CR file it came from.
	File      string `json:"file"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Ref names it as "websites/my-site".
	Ref string `json:"ref"`
	// Cycles holds this CR's changes in each cycle run on its file's cluster.
	Cycles []Cycle `json:"cycles"`
	// SteadyAt is the cycle at which the second change-free cycle in a row ended the run;
	// 0 when the run hit the cycle limit first.
	SteadyAt int `json:"steadyAt"`
	// OnDelete is what deleting the CR would remove: its onDelete objects that exist (a
	// remote CR: the children it owns, which the garbage collector removes).
	OnDelete []Change `json:"onDelete,omitempty"`
	// Operations are the long-running operations the CR waited on ("pending" answers
	// followed with polls), in the order they started.
	Operations []Operation `json:"operations,omitempty"`
	// Err is why this CR's reconcile failed (a render or build error naming the Katalog's
	// file and line); it is then left out of later cycles, and the other CRs go on.
	Err string `json:"error,omitempty"`
}

// Cycle is what one reconcile pass changed.
type Cycle struct {
	N       int      `json:"n"`
	Changes []Change `json:"changes,omitempty"`
	// Operation is the id of the operation the cycle's answer left pending.
	Operation string `json:"operation,omitempty"`
}

// Op is the kind of a change, written as kubectl diff's sign.
type Op string

// Change kinds.
const (
	Create Op = "+"
	Update Op = "~"
	Delete Op = "-"
)

// Change is one object created, updated or deleted.
type Change struct {
	Op  Op     `json:"op"`
	Ref string `json:"ref"`
}

func (c Change) String() string { return string(c.Op) + " " + c.Ref }

// target is one CR being reconciled, and what happened to it so far.
type target struct {
	crd    *katalog.CRD
	key    key
	result *CR
	plan   declarative.Plan
	// remote is set for a remote CRD's CR; requeue when its last answer asked for a re-run.
	remote  *remoteCRD
	requeue bool
	// op is the operation of the last "pending" answer, while it is followed; waitedOut
	// once the run stopped following it (RemoteOptions.OperationWait spent).
	op        *held
	waitedOut bool
}

// Run simulates the declarative CRDs of set, and the remote ones with opts.Remote. A
// render, build or remote error is recorded on its CR (CR.Err) and the other CRs go on; a
// CR file that cannot be read, or holds no CR of its CRD, stops the run.
func Run(ctx context.Context, set *katalog.Set, opts Options) (Report, error) {
	if opts.Cycles <= 0 {
		opts.Cycles = DefaultCycles
	}
	if opts.CRD != "" && set.CRD(opts.CRD) == nil {
		return Report{}, fmt.Errorf("no CRD %q in the Katalog", opts.CRD)
	}
	rep := Report{}
	var files []string
	byFile := map[string][]*katalog.CRD{}
	for _, c := range set.CRDs {
		if opts.CRD != "" && c.Name != opts.CRD {
			continue
		}
		res := CRD{Name: c.Name}
		switch {
		case c.IsRemote() && opts.Remote == nil:
			res.Skipped = SkipRemote
		case !c.IsRemote() && !c.OperatorBox.Reconcile.DefaultEnabled():
			res.Skipped = SkipDisabled
		case c.APITypes == nil || c.APITypes.Kind == "":
			return Report{}, fmt.Errorf("CRD %q: kind unknown (set apiTypes or crdFile)", c.Name)
		}
		rep.CRDs = append(rep.CRDs, res)
		if res.Skipped != "" {
			continue
		}
		for _, f := range crFiles(c, opts.CRFile) {
			if _, seen := byFile[f]; !seen {
				files = append(files, f)
			}
			byFile[f] = append(byFile[f], c)
		}
	}
	names := newNamer(set.CRDs)
	var w *waiter
	if opts.Remote != nil {
		w = newWaiter(opts.Remote)
	}
	for _, f := range files {
		targets, objs, err := simulateFile(ctx, f, byFile[f], names, set, opts, w)
		if err != nil {
			return Report{}, err
		}
		rep.Objects = append(rep.Objects, objs...)
		for _, t := range targets {
			i := slices.IndexFunc(rep.CRDs, func(r CRD) bool { return r.Name == t.crd.Name })
			rep.CRDs[i].CRs = append(rep.CRDs[i].CRs, *t.result)
		}
	}
	for i := range rep.CRDs {
		if rep.CRDs[i].Skipped == "" && len(rep.CRDs[i].CRs) == 0 {
			rep.CRDs[i].Skipped = SkipNoCRs
		}
	}
	return rep, nil
}

func crFiles(c *katalog.CRD, override string) []string {
	if override != "" {
		return []string{override}
	}
	var out []string
	for _, f := range c.CRFiles {
		out = append(out, c.Source.Resolve(f))
	}
	return out
}

// simulateFile runs the reconcile cycles on one CR file's cluster: every CR of crds in it
// is reconciled each cycle, until two cycles in a row change nothing or the limit.
func simulateFile(ctx context.Context, file string, crds []*katalog.CRD, names namer, set *katalog.Set, opts Options, w *waiter) ([]*target, []*unstructured.Unstructured, error) {
	seed, err := manifest.Read(file)
	if err != nil {
		return nil, nil, fmt.Errorf("read CR file: %w", err)
	}
	cl := newCluster(seed, names)
	remotes := map[*katalog.CRD]*remoteCRD{}
	var targets []*target
	for _, k := range cl.order {
		u := cl.get(k)
		c := names.crd(k.gk)
		if c == nil || !slices.Contains(crds, c) {
			continue
		}
		t := &target{crd: c, key: k, result: &CR{
			File: file, Namespace: u.GetNamespace(), Name: u.GetName(), Ref: names.ref(u),
		}}
		if c.IsRemote() {
			if remotes[c] == nil {
				if remotes[c], err = newRemoteCRD(c, set, seed, opts.Remote, opts.Operator, w); err != nil {
					return nil, nil, err
				}
			}
			t.remote = remotes[c]
		}
		cl.put(manifest.AsServed(u, c.IsNamespaced())) // a uid, to own children by
		targets = append(targets, t)
	}
	// A CRD's own crFiles must hold one of its CRs; --cr must hold one of some selected CRD.
	for _, c := range crds {
		has := slices.ContainsFunc(targets, func(t *target) bool { return t.crd == c })
		if !has && (opts.CRFile == "" || len(targets) == 0) {
			return nil, nil, fmt.Errorf("CRD %q: %s holds no %s (group %s) to simulate",
				c.Name, file, c.APITypes.Kind, c.APITypes.Group)
		}
	}
	recs := map[*katalog.CRD]*declarativeCRD{} // templates parsed once, not per cycle
	quiet := 0
	for n := 1; n <= opts.Cycles && quiet < 2; n++ {
		changed := false
		for _, t := range targets {
			if t.result.Err != "" || t.waitedOut {
				continue
			}
			cr := cl.get(t.key)
			if cr == nil {
				t.result.Cycles = append(t.result.Cycles, Cycle{N: n})
				continue
			}
			if t.remote != nil {
				due, err := w.awaitPoll(ctx, t)
				if err != nil {
					return nil, nil, err
				}
				if !due {
					t.waitedOut = true
					continue
				}
				changes, err := t.remote.reconcile(ctx, cl, t, n)
				if ctx.Err() != nil {
					return nil, nil, ctx.Err()
				}
				if err != nil {
					t.result.Err = err.Error()
					continue
				}
				c := Cycle{N: n, Changes: changes}
				if t.op != nil {
					// An operation held is no steady state, whatever the cycle changed.
					c.Operation, changed = t.op.state.ID, true
				}
				changed = changed || len(changes) > 0
				t.result.Cycles = append(t.result.Cycles, c)
				continue
			}
			if recs[t.crd] == nil {
				recs[t.crd] = newDeclarativeCRD(t.crd, set, opts.Operator)
			}
			t.plan, err = recs[t.crd].plan(cr)
			if err != nil {
				t.result.Err = err.Error()
				continue
			}
			changes := cl.reconcile(t.plan)
			changed = changed || len(changes) > 0
			t.result.Cycles = append(t.result.Cycles, Cycle{N: n, Changes: changes})
		}
		if changed {
			quiet = 0
		} else {
			quiet++
		}
		if quiet == 2 {
			for _, t := range targets {
				if t.result.Err == "" && t.op == nil {
					t.result.SteadyAt = n
				}
			}
		}
	}
	for _, t := range targets {
		if t.remote != nil {
			t.result.OnDelete = cl.ownedBy(cl.get(t.key))
			continue
		}
		t.result.OnDelete = cl.deletions(t.plan)
	}
	return targets, cl.objects(), nil
}

// Span is a run of consecutive cycles that made the same changes, and left the same
// operation pending.
type Span struct {
	From, To  int
	Changes   []Change
	Operation string
}

// Spans collapses identical consecutive cycles: "cycles 2-3: no changes".
func (r CR) Spans() []Span {
	var out []Span
	for _, c := range r.Cycles {
		if n := len(out); n > 0 && slices.Equal(out[n-1].Changes, c.Changes) && out[n-1].Operation == c.Operation {
			out[n-1].To = c.N
			continue
		}
		out = append(out, Span{From: c.N, To: c.N, Changes: c.Changes, Operation: c.Operation})
	}
	return out
}
