package run_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/runtest"
)

// runEngine runs an engine for f and returns the func that stops it and waits until it
// has (also run at the test's end).
func (f *fixture) runEngine(set *katalog.Set, cfg *rest.Config) (stop func()) {
	f.T.Helper()
	eng := f.NewEngine(set, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			f.T.Errorf("engine stopped with error: %v", err)
		}
	}
	f.T.Cleanup(stop)
	f.Eventually("engine ready", func() (bool, error) { return eng.Ready(), nil })
	return stop
}

// finishedPasses counts the passes the fixture's current engine finished.
func (f *fixture) finishedPasses() int {
	var done float64
	for _, r := range []string{"success", "error", "requeue"} {
		done += testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", r, "stable"))
	}
	return int(done)
}

// A restart over converged CRs writes nothing: every child (a Deployment with containers,
// ports and env; a ConfigMap) carries the digest of ork's last write, and ork still owns
// every field of it, so no child is applied again; no child the cache shows
// controlled is read; each CR costs one call and its status is already what the call says.
func TestRestartOverConvergedCRsWritesNothing(t *testing.T) {
	t.Parallel()
	const crs = 20
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, withEnvAndConfig)
	set := f.WriteKatalog(driftSpec(ep))
	stop := f.runEngine(set, nil)
	for i := range crs {
		f.CreateCR(fmt.Sprintf("app-%02d", i), map[string]any{})
	}
	for i := range crs {
		f.WaitReady(fmt.Sprintf("app-%02d", i), "True")
	}
	f.waitPassesDone(ep)
	stop()
	d, err := f.Get(runtest.Deployments, "app-00")
	if err != nil {
		t.Fatal(err)
	}
	if d.GetAnnotations()[naming.AppliedAnnotation] == "" {
		t.Fatalf("deployment app-00 has no %s annotation: %v", naming.AppliedAnnotation, d.GetAnnotations())
	}

	before := len(ep.Recorded())
	var rc requestCounter
	stop = f.runEngine(set, rc.config(env.Config))
	f.Eventually("a pass of every CR after the restart", func() (bool, error) {
		n := len(ep.Recorded()) - before
		return n >= crs && f.finishedPasses() >= n, nil
	})
	stop()

	for _, path := range []string{
		"/apis/apps/v1/namespaces/" + f.NS + "/deployments",
		"/api/v1/namespaces/" + f.NS + "/configmaps",
		"/apis/" + f.Group + "/v1/namespaces/" + f.NS + "/apps",
	} {
		if got := rc.matching(path, mutating...); len(got) != 0 {
			t.Errorf("after the restart, %d writes under %s, want none: %v", len(got), path, got)
		}
		if got := rc.matching(path+"/", http.MethodGet); len(got) != 0 {
			t.Errorf("after the restart, %d reads of single objects under %s, want none: %v", len(got), path, got)
		}
	}
	perCR := map[string]int{}
	for _, c := range ep.Recorded()[before:] {
		perCR[c.CRName()]++
	}
	for i := range crs {
		if name := fmt.Sprintf("app-%02d", i); perCR[name] != 1 {
			t.Errorf("after the restart, %d calls for %s, want one", perCR[name], name)
		}
	}
}

// A child edited while ork was down is repaired after the restart: another field manager
// wrote it after ork's last write, so its digest is not trusted.
func TestEditWhileDownIsRepairedAfterRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()})
	stop := f.runEngine(set, nil)
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.waitPassesDone(ep)
	stop()
	f.editChild(runtest.Deployments, "web", `{"spec":{"replicas":5}}`)
	d, err := f.Get(runtest.Deployments, "web")
	if err != nil {
		t.Fatal(err)
	}
	if d.GetAnnotations()[naming.AppliedAnnotation] == "" {
		t.Fatalf("the edit dropped the %s annotation: the test would not test the writers' times", naming.AppliedAnnotation)
	}
	f.runEngine(set, nil)
	f.Eventually("replicas repaired to 2", func() (bool, error) {
		d, err := f.Get(runtest.Deployments, "web")
		if err != nil {
			return false, err
		}
		r, _ := d.Object["spec"].(map[string]any)["replicas"].(int64)
		return r == 2, nil
	})
}
