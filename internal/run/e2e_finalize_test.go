package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/orkspace/ork/internal/finalizer"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

const finalizeOn = "            finalize: true\n"

func (f *fixture) finalizers(name string) []string {
	f.T.Helper()
	u, err := f.CRs().Get(f.T.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		f.T.Fatal(err)
	}
	return u.GetFinalizers()
}

func (f *fixture) waitFinalizer(name string, present bool) {
	f.T.Helper()
	f.Eventually(fmt.Sprintf("finalizer on %s: %v", name, present), func() (bool, error) {
		return slices.Contains(f.finalizers(name), finalizer.Name) == present, nil
	})
}

func (f *fixture) waitGone(name string) {
	f.T.Helper()
	f.Eventually(name+" gone", func() (bool, error) {
		_, err := f.CRs().Get(f.T.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// liftFinalizersAtCleanup removes every finalizer left on the CR when the test ends, so that
// its namespace can go.
func (f *fixture) liftFinalizersAtCleanup(name string) {
	f.T.Cleanup(func() {
		_, _ = f.CRs().Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
}

// finalize holds a deleted CR until the reconciler answers ok to a deleting call — across a
// restart of ork in the middle (the finalizer, not memory, holds the state). Adding the
// finalizer costs no call, and neither does the delete event once it is gone.
func TestFinalizeHoldsTheCRUntilOKAcrossARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var release atomic.Bool
	var oks atomic.Int32
	ep := runtest.NewEndpoint(t, func(c call) response {
		if !runtest.Deleting(c) {
			return runtest.JSONResponse(map[string]any{"result": "ok"})
		}
		if !release.Load() {
			return runtest.JSONResponse(map[string]any{"result": "requeue", "requeueAfter": "200ms"})
		}
		if c.CRName() == "web" {
			oks.Add(1)
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn})
	_, stop := f.StartStoppable(set, nil)
	f.liftFinalizersAtCleanup("web")
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.waitFinalizer("web", true)
	f.waitPassesDone(ep)
	if n := len(ep.CallsFor("web")); n != 1 {
		t.Errorf("%d calls for web before its delete, want 1: ork's own finalizer write costs no call", n)
	}

	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "deleting web", func(c call) bool { return c.CRName() == "web" && runtest.Deleting(c) })
	stop()
	if !slices.Contains(f.finalizers("web"), finalizer.Name) {
		t.Fatal("the CR lost ork's finalizer before the reconciler answered ok")
	}

	// A new ork knows nothing of the first one: the finalizer tells it to ask again.
	f.Start(set, nil)
	ep.NextMatching(t, "deleting web, asked by the new ork", func(c call) bool { return c.CRName() == "web" && runtest.Deleting(c) })
	if !slices.Contains(f.finalizers("web"), finalizer.Name) {
		t.Fatal("a requeue answer let the CR go")
	}
	release.Store(true)
	f.waitGone("web")

	// The delete event that follows ork's lift costs a pass, not a call.
	f.Eventually("the pass of web's delete event", func() (bool, error) {
		return strings.Contains(f.Logs.String(), "msg=reconciled crd=app key="+f.NS+"/web trigger=delete"), nil
	})
	if n := oks.Load(); n != 1 {
		t.Errorf("the reconciler answered ok to %d deleting calls for web, want 1: the delete event after ork lifted its finalizer is no news", n)
	}
}

// Past finalizeTimeout (counted from deletionTimestamp), ork lifts its finalizer even though
// the reconciler never said ok, and says so with a Warning Event; not before: the CR is
// still there at every look until deletionTimestamp + finalizeTimeout.
func TestFinalizeTimeoutRemovesTheFinalizerWithAnEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		if runtest.Deleting(c) {
			// A far requeue: the timeout must not wait for it.
			return runtest.JSONResponse(map[string]any{"result": "requeue", "requeueAfter": "10m"})
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	const timeout = 3 * time.Second
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn + "            finalizeTimeout: 3s\n"}), nil)
	f.liftFinalizersAtCleanup("web")
	f.CreateCR("web", map[string]any{})
	f.waitFinalizer("web", true)
	deleted := time.Now()
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "deleting web", func(c call) bool { return runtest.Deleting(c) })
	// deletionTimestamp has whole seconds (rounded down), as ork reads it too: the deadline
	// is that plus the timeout, at most a second before the delete + timeout.
	cr, err := f.CRs().Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("web right after its delete call: %v (the finalizer was lifted at once?)", err)
	}
	deadline := cr.GetDeletionTimestamp().Add(timeout)
	f.waitGone("web")
	gone := time.Now() // polled every 50 ms: at most that late
	if gone.Before(deadline) {
		t.Errorf("the finalizer was lifted %v before deletionTimestamp + finalizeTimeout", deadline.Sub(gone))
	}
	// After: by the timeout (from the delete call) plus slack for one pass, the apiserver's
	// delete and the poll: 2 s on a loaded 2-core machine, well under the 10 m requeue.
	if late := gone.Sub(deleted.Add(timeout)); late > 2*time.Second {
		t.Errorf("the finalizer was lifted %v after the delete + finalizeTimeout, want within 2s", late)
	}
	ev := f.WaitEvent("web", corev1.EventTypeWarning, run.EventFinalizeTimeout)
	if !strings.Contains(ev.Message, "3s") {
		t.Errorf("FinalizeTimeout Event %q does not name the timeout", ev.Message)
	}
}

// Another controller's finalizer is never dropped, nor one it lifted put back, when its
// write lands between ork's read and ork's own finalizer write: while ork adds its finalizer
// (another is added), and while it removes it from a deleted CR (another is lifted).
func TestFinalizeNeverDropsAnotherControllersFinalizer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	faults := newAPIFaults()
	ep := runtest.NewEndpoint(t, func(c call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	f.liftFinalizersAtCleanup("web")
	crPath := fmt.Sprintf("/apis/%s/v1/namespaces/%s/apps/web", f.Group, f.NS)
	const other, third = "example.com/other", "example.com/third"
	setFinalizers := func(edit func([]string) []string) {
		cr, err := f.CRs().Get(context.Background(), "web", metav1.GetOptions{})
		if err != nil {
			t.Errorf("the other controller's read: %v", err)
			return
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": edit(cr.GetFinalizers())}})
		if _, err := f.CRs().Patch(context.Background(), "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Errorf("the other controller's write: %v", err)
		}
	}
	var onAdd, onRemove sync.Once
	var deleted atomic.Bool
	faults.beforeRequest = func(req *http.Request) {
		if req.Method != http.MethodPatch || req.URL.Path != crPath {
			return
		}
		// Ork's finalizer write is on its way: the other controller gets in first.
		if !deleted.Load() {
			onAdd.Do(func() { setFinalizers(func(fs []string) []string { return append(fs, other) }) })
			return
		}
		onRemove.Do(func() {
			setFinalizers(func(fs []string) []string {
				return slices.DeleteFunc(fs, func(s string) bool { return s == third })
			})
		})
	}
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn}), faults.config(env.Config))
	f.CreateCR("web", map[string]any{})
	f.waitFinalizer("web", true)
	if got := f.finalizers("web"); !slices.Contains(got, other) {
		t.Fatalf("finalizers %v: ork's add dropped %s", got, other)
	}

	setFinalizers(func(fs []string) []string { return append(fs, third) })
	deleted.Store(true)
	if err := f.CRs().Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.waitFinalizer("web", false)
	if got := f.finalizers("web"); !slices.Equal(got, []string{other}) {
		t.Errorf("finalizers %v after ork lifted its own, want [%s]: %s was lifted meanwhile", got, other, third)
	}
}

// Turning finalize off lifts ork's finalizer from existing CRs at the next reconcile (here
// the start of the next ork).
func TestTurningFinalizeOffRemovesTheFinalizer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	_, stop := f.StartStoppable(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn}), nil)
	f.liftFinalizersAtCleanup("web")
	f.CreateCR("web", map[string]any{})
	f.waitFinalizer("web", true)
	stop()
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.waitFinalizer("web", false)
}

// ork finalizers release lifts ork's finalizer from every CR of the Katalog (the way out
// before uninstalling ork), leaves another controller's alone, and lets a CR being deleted go.
func TestFinalizersReleaseFreesEveryCR(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		if runtest.Deleting(c) {
			return runtest.JSONResponse(map[string]any{"result": "requeue", "requeueAfter": "10m"})
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	_, stop := f.StartStoppable(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: finalizeOn}), nil)
	for _, name := range []string{"a", "b", "held"} {
		f.liftFinalizersAtCleanup(name)
		f.CreateCR(name, map[string]any{})
		f.waitFinalizer(name, true)
	}
	f.PatchSpec("held", `{"metadata":{"finalizers":["example.com/other","`+finalizer.Name+`"]}}`)
	if err := f.CRs().Delete(t.Context(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "deleting a", func(c call) bool { return c.CRName() == "a" && runtest.Deleting(c) })
	stop()

	cmd := exec.CommandContext(t.Context(), bin, "finalizers", "release", "-f", f.Katalog, "--kubeconfig", f.kubeconfig(func(*clientcmdapi.Config) {}))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ork finalizers release: %v\n%s", err, out)
	}
	for _, want := range []string{"released app " + f.NS + "/a (being deleted", "released app " + f.NS + "/b\n", "released app " + f.NS + "/held\n",
		finalizer.Name + " removed from 3 custom resources"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f.waitGone("a")
	f.waitFinalizer("b", false)
	if got := f.finalizers("held"); !slices.Equal(got, []string{"example.com/other"}) {
		t.Errorf("held has finalizers %v, want only example.com/other", got)
	}
}
