package run_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// fanOut answers each CR with n ConfigMaps of its own.
func fanOut(n int) func(call) response {
	return func(c call) response {
		resources := make([]any, n)
		for i := range resources {
			resources[i] = map[string]any{"type": "configmap", "fields": map[string]any{
				"name": fmt.Sprintf("%s-%02d", c.CRName(), i), "data": map[string]any{"i": fmt.Sprint(i)}}}
		}
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": resources})
	}
}

// withWorkers rewrites the fixture's Katalog with reconcile.workers set to n.
func (f *fixture) withWorkers(n int) *katalog.Set {
	f.T.Helper()
	doc, err := os.ReadFile(f.Katalog)
	if err != nil {
		f.T.Fatal(err)
	}
	if err := os.WriteFile(f.Katalog, []byte(strings.Replace(string(doc), "workers: 2", fmt.Sprintf("workers: %d", n), 1)), 0o600); err != nil {
		f.T.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{f.Katalog})
	if err != nil || katalog.HasErrors(findings) {
		f.T.Fatalf("Katalog with %d workers does not load: %v %+v", n, err, findings)
	}
	return set
}

// lockWaits is the CRD's ork_child_lock_wait_seconds: observations, their sum, and how many
// were at most bound (bound must be one of the histogram's bucket bounds).
func lockWaits(t *testing.T, m *run.Metrics, crd string, bound float64) (count uint64, sum float64, within uint64) {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, fam := range families {
		if fam.GetName() != "ork_child_lock_wait_seconds" {
			continue
		}
		for _, metric := range fam.GetMetric() {
			if len(metric.GetLabel()) != 1 || metric.GetLabel()[0].GetValue() != crd {
				continue
			}
			h := metric.GetHistogram()
			count, sum = h.GetSampleCount(), h.GetSampleSum()
			for _, b := range h.GetBucket() {
				if b.GetUpperBound() == bound {
					within, found = b.GetCumulativeCount(), true
				}
			}
		}
	}
	if !found {
		t.Fatalf("ork_child_lock_wait_seconds{crd=%q} has no bucket le=%g", crd, bound)
	}
	return count, sum, within
}

// 22 The child locks are per child: 30 CRs of 20 children each, reconciled by 8 workers,
// lock every child on their first pass (none is in the cache yet) and never wait for each
// other, since no two name one child. Bounds: every wait at most 0.1024 s (a histogram
// bucket) and all of them together under 1 s. An uncontended lock takes microseconds; the
// bounds leave room for a worker descheduled on a loaded 2-core machine. Locks shared by
// unrelated children (the 256 stripes before) made a pass wait for whole passes of others,
// tens of milliseconds each on this apiserver, for most of the 600 children.
func TestChildLocksUnrelatedCRsDoNotWait(t *testing.T) {
	t.Parallel()
	const crs, children = 30, 20
	const waitBound, sumBound = 0.1024, 1.0
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, fanOut(children))
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"}})
	f.Start(f.withWorkers(8), nil)
	for i := range crs {
		f.CreateCR(fmt.Sprintf("fan-%02d", i), map[string]any{})
	}
	f.EventuallyWithin(90*time.Second, fmt.Sprintf("%d CRs Ready", crs), func() (bool, error) {
		list, err := f.CRs().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			if c := runtest.ReadyCondition(&list.Items[i]); c != nil && c["status"] == "True" {
				ready++
			}
		}
		if ready < crs {
			return false, fmt.Errorf("%d of %d Ready", ready, crs)
		}
		return true, nil
	})
	cms, err := f.Dyn.Resource(runtest.ConfigMaps).Namespace(f.NS).List(t.Context(), metav1.ListOptions{LabelSelector: run.ManagedByLabel + "=" + run.ManagedByValue})
	if err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != crs*children {
		t.Fatalf("%d ConfigMaps written, want %d", len(cms.Items), crs*children)
	}
	count, sum, within := lockWaits(t, f.Metrics, "app", waitBound)
	t.Logf("child lock waits: %d, total %.6fs, %d at most %gs", count, sum, within, waitBound)
	if count < crs*children {
		t.Errorf("%d lock waits observed, want at least one per child created (%d): the first pass checks each child live, under its lock", count, crs*children)
	}
	if within != count {
		t.Errorf("%d of %d lock waits took longer than %gs: unrelated CRs waited for each other", count-within, count, waitBound)
	}
	if sum > sumBound {
		t.Errorf("lock waits total %.3fs, want under %gs: unrelated CRs waited for each other", sum, sumBound)
	}
}
