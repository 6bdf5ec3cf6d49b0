package targetrun_test

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/run/runtest"
)

// passesSince counts, for the fixture's current engine, the passes it skipped and those it
// finished with a call (ork_reconcile_total, which a skipped pass is not counted in).
func passesSince(f *runtest.Fixture) (skipped, finished int) {
	skipped = int(testutil.ToFloat64(f.Metrics.SkippedUnchanged.WithLabelValues("app")))
	for _, r := range []string{"success", "error", "requeue"} {
		finished += int(testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", r, "stable")))
	}
	return skipped, finished
}

// With reconcile.remote.skipUnchanged, a restart skips the CRs whose children on their
// target are as their last decision left them, read from the spoke's child caches, and
// calls the one whose Deployment on the spoke another manager changed meanwhile: the call
// repairs it.
func TestSkipUnchangedTargetRestartCallsOnlyTheDriftedChild(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, ""))
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: `            target:
              kubeconfigSecretRef: {name: "{{ .spec.cluster }}", key: kubeconfig}
            skipUnchanged: {maxAge: 1h}
`})
	const crs = 10
	name := func(i int) string { return fmt.Sprintf("app-%02d", i) }
	want := f.NS + "/spoke[kubeconfig]"

	_, stop := f.StartStoppable(set, nil)
	for i := range crs {
		f.CreateCR(name(i), spec("spoke"))
	}
	for i := range crs {
		waitReady(f, name(i), converge)
	}
	f.EventuallyWithin(converge, "every call's pass finished, every decision recorded with its children on the spoke", func() (bool, error) {
		if _, finished := passesSince(f); finished < len(ep.Recorded()) {
			return false, nil
		}
		for i := range crs {
			d, ok, err := prov.FromStatus(f.GetCR(name(i)))
			if err != nil || !ok || d.Children == "" || d.Target != want {
				return false, fmt.Errorf("%s: %+v (%v, %v)", name(i), d, ok, err)
			}
		}
		return true, nil
	})
	stop()

	const drifted = 3
	sd := spokeDyn(t).Resource(deployments).Namespace(f.NS)
	if _, err := sd.Patch(t.Context(), name(drifted), types.MergePatchType, []byte(`{"spec":{"replicas":5}}`),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	before := len(ep.Recorded())
	f.Start(set, nil)
	f.EventuallyWithin(converge, "a first pass of every CR after the restart", func() (bool, error) {
		skipped, finished := passesSince(f)
		n := len(ep.Recorded()) - before
		return n+skipped >= crs && finished >= n, nil
	})
	f.EventuallyWithin(converge, "the drifted Deployment repaired on the spoke", func() (bool, error) {
		u, err := sd.Get(t.Context(), name(drifted), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if r != 2 {
			return false, fmt.Errorf("spec.replicas %d", r)
		}
		return true, nil
	})
	called := map[string]int{}
	for _, c := range ep.Recorded()[before:] {
		called[c.CRName()]++
	}
	skipped, _ := passesSince(f)
	t.Logf("after the restart: calls %v, %d passes skipped", called, skipped)
	if called[name(drifted)] == 0 {
		t.Errorf("%s, whose child on the spoke another manager changed, was not called", name(drifted))
	}
	for cr := range called {
		if cr != name(drifted) {
			t.Errorf("%s, whose children on the spoke are unchanged, was called after the restart", cr)
		}
	}
	if skipped != crs-len(called) {
		t.Errorf("ork_reconcile_skipped_unchanged_total = %d, want %d (the CRs not called)", skipped, crs-len(called))
	}
}
