package run

import (
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/keyledger"
)

// The configuration a record's children digest carries changes with what the reconciler is
// asked (its endpoint, its args templates), not with skipUnchanged's own maxAge or a rollout.
func TestSkipConfigChangesWithTheQuestionOnly(t *testing.T) {
	base := katalog.Remote{Endpoint: "https://a/reconcile", Args: map[string]any{"x": "{{ .spec.x }}"},
		SkipUnchanged: &katalog.SkipUnchanged{MaxAge: "1h"}}
	with := func(f func(*katalog.Remote)) *katalog.Remote { r := base; f(&r); return &r }
	for _, tc := range []struct {
		name string
		r    *katalog.Remote
		same bool
	}{
		{"another maxAge", with(func(r *katalog.Remote) { r.SkipUnchanged = &katalog.SkipUnchanged{MaxAge: "2h"} }), true},
		{"a candidate added", with(func(r *katalog.Remote) { r.Candidate = &katalog.Candidate{Mode: "shadow"} }), true},
		{"another endpoint", with(func(r *katalog.Remote) { r.Endpoint = "https://b/reconcile" }), false},
		{"other args", with(func(r *katalog.Remote) { r.Args = map[string]any{"x": "{{ .spec.y }}"} }), false},
	} {
		if got := skipConfig(tc.r) == skipConfig(&base); got != tc.same {
			t.Errorf("%s: same config digest %v, want %v", tc.name, got, tc.same)
		}
	}
	if skipConfig(&base) == "" {
		t.Error("no digest of the configuration")
	}
}

// noChildren is a CRD's writes whose CRs have no children: only ChildStates is asked.
type noChildren struct{ childWrites }

func (noChildren) ChildStates(*unstructured.Unstructured, *childwrite.Report, bool) ([]prov.ChildState, bool) {
	return nil, true
}

// A skipped pass is done, or queued again when the requeue its last answer asked for is due
// (counted from that decision, not from the skip); only a first pass skips, and never a CR
// being deleted, one whose record lost its requeue to a schema, one dated ahead of this
// clock, or one a --redact path outside spec hides an input of.
func TestSkipUnchangedDecision(t *testing.T) {
	secret, err := dotpath.Parse("metadata.labels.secret")
	if err != nil {
		t.Fatal(err)
	}
	c := &controller{ledger: keyledger.New(), writes: noChildren{}, e: &Engine{},
		cfg: crdConfig{skipMaxAge: time.Hour, skipConfig: "cfg", log: slog.New(slog.DiscardHandler)}}
	type rec struct {
		requeue, digestRequeue string
		age                    time.Duration
		label                  bool
	}
	cr := func(r rec, deleting bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "web", "namespace": "ns", "uid": "u1"}}}
		if r.label {
			u.SetLabels(map[string]string{"secret": "hunter2"})
		}
		inputs := passRecord{redact: c.e.redact}.inputs(u)
		u.Object["status"] = map[string]any{prov.StatusField: prov.LastDecision{ID: "d1", Time: time.Now().Add(-r.age),
			Inputs: inputs, Children: prov.ChildrenDigest(c.childrenConfig(r.digestRequeue), nil), RequeueAfter: r.requeue}.Status()}
		if deleting {
			u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		}
		return u
	}
	minute := rec{age: time.Minute}
	for _, tc := range []struct {
		name     string
		rec      rec
		first    bool
		deleting bool
		redact   []dotpath.Path
		skip     bool
		action   action
		maxAfter time.Duration
	}{
		{"done", minute, true, false, nil, true, actionDone, 0},
		{"the recorded requeue, due from the decision", rec{requeue: "30s", digestRequeue: "30s", age: 10 * time.Second}, true, false, nil, true, actionRequeueAfter, 20 * time.Second},
		{"the recorded requeue, overdue", rec{requeue: "30s", digestRequeue: "30s", age: time.Minute}, true, false, nil, true, actionRequeueAfter, minRequeueAfter},
		{"a requeue a schema pruned from the record", rec{digestRequeue: "30s", age: time.Minute}, true, false, nil, false, 0, 0},
		{"a record dated ahead of this clock", rec{age: -time.Hour}, true, false, nil, false, 0, 0},
		// The record's digest is masked as the skip's is: only redactHides refuses.
		{"a redacted label", rec{age: time.Minute, label: true}, true, false, []dotpath.Path{secret}, false, 0, 0},
		{"a redact path the CR does not hold", minute, true, false, []dotpath.Path{secret}, true, actionDone, 0},
		{"a later pass", minute, false, false, nil, false, 0, 0},
		{"a CR being deleted", minute, true, true, nil, false, 0, 0},
	} {
		c.e.redact = tc.redact
		in := input{key: "ns/web", cr: cr(tc.rec, tc.deleting), first: tc.first, deleting: tc.deleting}
		d, ok := c.skipUnchanged(in, nil, nil)
		if ok != tc.skip || ok && (d.action != tc.action || d.after > tc.maxAfter || tc.maxAfter > 0 && d.after <= 0 || !d.skipped || d.reason != ReasonSkippedUnchanged) {
			t.Errorf("%s: skipped %v, action %v after %s (%+v); want skipped %v, action %v after at most %s", tc.name, ok, d.action, d.after, d, tc.skip, tc.action, tc.maxAfter)
		}
	}
}
