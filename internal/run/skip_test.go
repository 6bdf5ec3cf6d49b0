package run

import (
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
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

// A skipped pass is done, or queued again after the requeue its last answer asked for; only
// a first pass skips, and never a CR being deleted.
func TestSkipUnchangedDecision(t *testing.T) {
	c := &controller{ledger: keyledger.New(), writes: noChildren{},
		cfg: crdConfig{skipMaxAge: time.Hour, skipConfig: "cfg", log: slog.New(slog.DiscardHandler)}}
	cr := func(requeue string, deleting bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "web", "namespace": "ns", "uid": "u1"},
			"status": map[string]any{prov.StatusField: prov.LastDecision{ID: "d1", Time: time.Now().Add(-time.Minute),
				Inputs: "sha256:in", Children: prov.ChildrenDigest("cfg", nil), RequeueAfter: requeue}.Status()}}}
		if deleting {
			u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		}
		return u
	}
	for _, tc := range []struct {
		name   string
		in     input
		skip   bool
		action action
		after  time.Duration
	}{
		{"done", input{key: "ns/web", cr: cr("", false), first: true}, true, actionDone, 0},
		{"the recorded requeue kept", input{key: "ns/web", cr: cr("30s", false), first: true}, true, actionRequeueAfter, 30 * time.Second},
		{"a later pass", input{key: "ns/web", cr: cr("", false)}, false, 0, 0},
		{"a CR being deleted", input{key: "ns/web", cr: cr("", true), first: true, deleting: true}, false, 0, 0},
	} {
		d, ok := c.skipUnchanged(tc.in, "sha256:in")
		if ok != tc.skip || ok && (d.action != tc.action || d.after != tc.after || !d.skipped || d.reason != ReasonSkippedUnchanged) {
			t.Errorf("%s: skipped %v, action %v after %s (%+v); want skipped %v, action %v after %s", tc.name, ok, d.action, d.after, d, tc.skip, tc.action, tc.after)
		}
	}
}
