package run_test

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// editChild merge-patches a child as a person with kubectl would.
func (f *fixture) editChild(gvr schema.GroupVersionResource, name, patch string, subresource ...string) {
	f.T.Helper()
	if _, err := f.Dyn.Resource(gvr).Namespace(f.NS).Patch(f.T.Context(), name, types.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}, subresource...); err != nil {
		f.T.Fatal(err)
	}
}

func (f *fixture) triggers(trigger string) float64 {
	return testutil.ToFloat64(f.Metrics.TriggersTotal.WithLabelValues("app", trigger))
}

// waitPassesDone waits until every call the endpoint received has finished its pass in
// ork (status written, or nothing to write): ork_reconcile_total counts finished passes.
func (f *fixture) waitPassesDone(ep *endpoint) {
	f.T.Helper()
	f.Eventually("the passes of every call so far", func() (bool, error) {
		return f.finishedPasses() >= len(ep.Calls()), nil
	})
}

// loggedPass is a pass of one CR as ork's log line at its end tells it.
type loggedPass struct {
	ended   time.Time // the line's time, to the millisecond (rounded down)
	trigger string
	attempt int64 // as sent in the call's prepared.attempt
}

// loggedPasses reads name's passes from ork's log, in order. Every pass logs one line when
// it ends ("reconciled" at debug, "reconcile failed" at warn), before it schedules what
// comes next (a retry, a resync): a delay measured from the line's time is never shorter
// than the one ork chose, and leaves out how long the pass took after its call.
func (f *fixture) loggedPasses(name string) []loggedPass {
	f.T.Helper()
	line := regexp.MustCompile(`time=(\S+) level=\w+ msg=(?:reconciled|"reconcile failed") crd=app key=` +
		regexp.QuoteMeta(f.NS+"/"+name) + ` trigger=(\w+) attempt=(\d+)`)
	var passes []loggedPass
	for _, m := range line.FindAllStringSubmatch(f.Logs.String(), -1) {
		ended, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			f.T.Fatalf("a pass's log time: %v", err)
		}
		attempt, err := strconv.ParseInt(m[3], 10, 64)
		if err != nil {
			f.T.Fatalf("a pass's attempt: %v", err)
		}
		passes = append(passes, loggedPass{ended: ended, trigger: m[2], attempt: attempt})
	}
	return passes
}

// 10.12 ork's own writes coming back cost no call: neither the children's creation, nor
// the restore of a field someone edited, nor a child's status change (the children payload
// is off). Each foreign edit costs exactly one call, no sooner than ChildMinInterval after
// the pass before. Events of one type arrive in order, so a foreign edit's call is a fence:
// every earlier event of that type has been handled when it arrives.
func TestOwnWritesCostNoCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	const interval = 500 * time.Millisecond
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil, func(o *run.Options) { o.ChildMinInterval = interval })
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.Eventually("children", func() (bool, error) {
		_, errD := f.Get(runtest.Deployments, "web")
		_, errS := f.Get(runtest.Services, "web-svc")
		return errD == nil && errS == nil, nil
	})

	// Each edit waits until the pass before it is over: an edit that lands while a pass runs
	// may be covered by that pass's own apply, and cost no call.
	f.editChild(runtest.Deployments, "web", `{"spec":{"replicas":7}}`) // ork owns replicas: restored
	ep.NextMatching(t, "after the replicas edit", func(c call) bool { return c.Trigger == "resync" })
	f.waitPassesDone(ep)
	f.Eventually("replicas restored", func() (bool, error) {
		d, err := f.Get(runtest.Deployments, "web")
		r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		return err == nil && r == 2, err
	})
	f.editChild(runtest.Deployments, "web", `{"status":{"observedGeneration":9}}`, "status") // status only
	f.editChild(runtest.Services, "web-svc", `{"metadata":{"labels":{"team":"a"}}}`)         // fence for services
	ep.NextMatching(t, "after the service edit", func(c call) bool { return c.Trigger == "resync" })
	f.waitPassesDone(ep)
	f.editChild(runtest.Deployments, "web", `{"metadata":{"labels":{"team":"a"}}}`) // fence for deployments
	ep.NextMatching(t, "after the deployment label edit", func(c call) bool { return c.Trigger == "resync" })

	if got := f.triggers("child"); got != 3 {
		t.Errorf("%v child triggers, want 3 (the three foreign edits; echoes and status changes are free)", got)
	}
	calls := ep.CallsFor("web")
	if len(calls) != 4 {
		t.Errorf("%d calls for web, want 4: create and one per foreign edit", len(calls))
	}
	for i := 2; i < len(calls); i++ {
		if gap := calls[i].Start.Sub(calls[i-1].Start); gap < interval-50*time.Millisecond {
			t.Errorf("child-triggered call %d came %v after the one before, want at least ChildMinInterval (%v)", i, gap, interval)
		}
	}
}

// 10.12 A reconciler whose answer changes on every call (a timestamp) does not run hot:
// the change it causes is ork's own write.
func TestNonDeterministicReconcilerDoesNotLoop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var n atomic.Int32
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"type": "configmap", "fields": map[string]any{"name": "web-config",
				"data": map[string]any{"generatedAt": fmt.Sprint(n.Add(1))}}},
		}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"}}), nil)
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	for i := range 2 { // fences: a foreign label edit, each answered by one call
		f.Eventually("configmap", func() (bool, error) { _, err := f.Get(runtest.ConfigMaps, "web-config"); return err == nil, nil })
		f.editChild(runtest.ConfigMaps, "web-config", fmt.Sprintf(`{"metadata":{"labels":{"edit":"%d"}}}`, i))
		ep.NextMatching(t, "after the edit", func(c call) bool { return c.Trigger == "resync" })
		f.waitPassesDone(ep)
	}
	if calls := ep.CallsFor("web"); len(calls) != 3 {
		t.Errorf("%d calls, want 3 (create and two edits): the reconciler's changing answer made ork loop", len(calls))
	}
	// Counted before the queue merges them: an echo taken for a change would show here even
	// when its pass merged with a fence's.
	if got := f.triggers("child"); got != 2 {
		t.Errorf("%v child triggers, want 2 (the two edits): ork's own writes were taken for changes", got)
	}
}

// 10.12 requeueAfter below 100ms is raised to 100ms.
func TestRequeueAfterHasAFloor(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var n atomic.Int32
	ep := runtest.NewEndpoint(t, func(c call) response {
		if n.Add(1) < 3 {
			return runtest.JSONResponse(map[string]any{"result": "ok", "requeueAfter": "1ms"})
		}
		return runtest.JSONResponse(map[string]any{"result": "ok"})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{})
	calls := []call{ep.Next(t), ep.Next(t), ep.Next(t)}
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].Start.Sub(calls[i-1].Start); gap < 100*time.Millisecond {
			t.Errorf("requeue %d came %v after the call before, want at least the 100ms floor", i, gap)
		}
	}
}

// 10.5 Without replicas in the result ork does not own the field: an autoscaler's scale
// survives ork's next pass.
func TestAutoscalerKeepsReplicasTheReconcilerDoesNotSend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": "nginx:1.27"}},
		}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"v": 1})
	f.WaitReady("web", "True")
	// As the HorizontalPodAutoscaler does: through the scale subresource, its own manager.
	if _, err := f.Dyn.Resource(runtest.Deployments).Namespace(f.NS).Patch(t.Context(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "horizontal-pod-autoscaler"}, "scale"); err != nil {
		t.Fatal(err)
	}
	f.PatchSpec("web", `{"spec":{"v":2}}`)
	f.Eventually("generation 2 reconciled", func() (bool, error) {
		og, _, _ := unstructured.NestedInt64(f.GetCR("web").Object, "status", "observedGeneration")
		return og == 2, nil
	})
	dep, err := f.Get(runtest.Deployments, "web")
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 5 {
		t.Errorf("replicas = %d after ork's pass, want the autoscaler's 5", r)
	}
}

// 10.6 A reconciler that edits the child it got in prepared.children and returns it whole
// gets it applied without its server-populated fields, and never takes the Deployment
// controller's revision annotation (a tug of war on every rollout). Not parallel: the
// deployment controller acts on every Deployment of the cluster.
func TestRoundTrippedChildDoesNotFightItsController(t *testing.T) {
	f := newFixture(t)
	env.StartControllerManager(t, "deployment")
	ep := runtest.NewEndpoint(t, func(c call) response {
		img, _, _ := unstructured.NestedString(c.Body, "object", "spec", "image")
		child, found, _ := unstructured.NestedMap(c.Body, "prepared", "children", "deployment", "web")
		if !found {
			return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
				map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": img}},
			}})
		}
		u := unstructured.Unstructured{Object: child}
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		cs[0].(map[string]any)["image"] = img
		_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{u.Object}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(),
		Payload: "              children:\n                enabled: true\n"}), nil)
	f.CreateCR("web", map[string]any{"image": "nginx:1.27"})
	f.WaitReady("web", "True")
	f.Eventually("revision 1", func() (bool, error) {
		d, err := f.Get(runtest.Deployments, "web")
		return err == nil && d.GetAnnotations()["deployment.kubernetes.io/revision"] == "1", nil
	})
	for i, img := range []string{"nginx:1.28", "nginx:1.29"} {
		f.PatchSpec("web", fmt.Sprintf(`{"spec":{"image":%q}}`, img))
		want := fmt.Sprint(i + 2)
		f.Eventually("rollout to "+img, func() (bool, error) {
			c := runtest.ReadyCondition(f.GetCR("web"))
			d, err := f.Get(runtest.Deployments, "web")
			if err != nil || c == nil {
				return false, err
			}
			if c["status"] != "True" {
				return false, fmt.Errorf("Ready %v", c)
			}
			return image(d) == img && d.GetAnnotations()["deployment.kubernetes.io/revision"] == want, nil
		})
	}
	d, _ := f.Get(runtest.Deployments, "web")
	for _, mf := range d.GetManagedFields() {
		if mf.Manager != run.FieldManager || mf.FieldsV1 == nil {
			continue
		}
		raw := mf.FieldsV1.GetRawString()
		for _, bad := range []string{"deployment.kubernetes.io/revision", `"f:status"`} {
			if strings.Contains(raw, bad) {
				t.Errorf("orkestra (%s) owns %s: it would fight the Deployment controller", mf.Operation, bad)
			}
		}
	}
}

// 10.13 A reconcile that changes nothing records no Event: only a new generation, Ready
// turning True or a child created or changed do.
func TestIdlePassesRecordNoEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"v": 1})
	f.WaitReady("web", "True")
	f.PatchSpec("web", `{"metadata":{"labels":{"team":"a"}}}`) // an update with nothing to do
	ep.NextMatching(t, "the label update", func(c call) bool { return c.Trigger == "update" })
	f.PatchSpec("web", `{"spec":{"v":2}}`)
	f.Eventually("the Event of generation 2", func() (bool, error) {
		for _, e := range f.Events("web") {
			if e.Reason == "Reconciled" && strings.Contains(e.Message, "generation 2") {
				return true, nil
			}
		}
		return false, nil
	})
	var n int32
	for _, e := range f.Events("web") {
		if e.Type == corev1.EventTypeNormal && e.Reason == "Reconciled" {
			n += e.Count
		}
	}
	if n != 2 {
		t.Errorf("%d Reconciled Events, want 2 (generation 1 and 2; the label update changed nothing)", n)
	}
}

// 10.11 A reconciler that keeps returning an unknown kind does not refresh the discovery
// cache on every reconcile: refreshes are rate-limited.
func TestUnknownKindDoesNotRefreshDiscoveryEveryTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	faults := newAPIFaults()
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": map[string]any{"name": "web"}},
		}})
	})
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), faults.config(env.Config),
		func(o *run.Options) { o.DiscoveryResetInterval = time.Hour })
	before := faults.count("GET discovery")
	f.CreateCR("web", map[string]any{})
	for range 6 {
		ep.Next(t)
	}
	got := f.WaitReady("web", "False")
	if msg, _ := runtest.ReadyCondition(got)["message"].(string); !strings.Contains(msg, "Deploymnet") {
		t.Errorf("Ready message %q does not name the unknown kind", msg)
	}
	if n := faults.count("GET discovery") - before; n > 4 {
		t.Errorf("%d discovery requests for 6 reconciles of an unknown kind, want one refresh at most", n)
	}
}

// 10.10 Declarative customs entries are applied by ork run, and their type is watched.
func TestDeclarativeCustomsApplyInRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.InstallCRD("Widget", "widgets")
	widgets := schema.GroupVersionResource{Group: f.Group, Version: "v1", Resource: "widgets"}
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: customs-e2e}
spec:
  crds:
    app:
      apiTypes: {group: %[1]s, version: v1, kind: App, plural: apps}
      operatorBox:
        reconcile: {default: true}
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-settings"
              data: {size: "{{ .spec.size }}"}
          customs:
            - apiVersion: %[1]s/v1
              kind: Widget
              name: "{{ .metadata.name }}-widget"
              spec: {size: "{{ .spec.size }}"}
`, f.Group)
	set := f.LoadKatalog(doc)
	f.Start(set, nil)
	cr := f.CreateCR("site", map[string]any{"size": 3})
	f.WaitReady("site", "True")
	w, err := f.Get(widgets, "site-widget")
	if err != nil {
		t.Fatalf("the customs entry was not applied: %v", err)
	}
	assertOwnedByOrk(t, w, cr)
	if _, err := f.Get(runtest.ConfigMaps, "site-settings"); err != nil {
		t.Errorf("the configMaps entry beside it: %v", err)
	}
	// The Widget type is watched: deleting it re-creates it.
	if err := f.Dyn.Resource(widgets).Namespace(f.NS).Delete(t.Context(), "site-widget", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the widget re-created", func() (bool, error) {
		_, err := f.Get(widgets, "site-widget")
		return err == nil, nil
	})
}

// reconcile.resync calls again for every CR, each at its own jittered time, between 3/4 and
// 5/4 of the interval after its last pass, and ork records it as trigger resync: a pass a
// child's edit started goes to the reconciler as resync too (docs/remote-reconciler.md#when-ork-calls), but ork
// records it as child, and it moves the next resync on.
func TestPeriodicResync(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	const interval = 2 * time.Second
	// The token Secret is read once: no apiserver request between a pass's end and the
	// resync's call, which the window below times.
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Resync: interval.String()}), nil,
		func(o *run.Options) { o.SecretTTL = time.Hour })
	f.CreateCR("web", map[string]any{})
	calls := []call{ep.Next(t)}
	f.waitPassesDone(ep)
	f.editChild(runtest.Deployments, "web", `{"metadata":{"labels":{"edit":"1"}}}`)
	for len(calls) < 4 {
		calls = append(calls, ep.Next(t))
	}
	f.waitPassesDone(ep)
	// Each pass of web logs its recorded trigger, in the order of its calls (one call per
	// pass, one pass of a key at a time).
	// A pass is counted finished just before it logs its line.
	var recorded []loggedPass
	f.Eventually("a log line for each pass", func() (bool, error) {
		recorded = f.loggedPasses("web")
		return len(recorded) >= len(calls), nil
	})
	var triggers []string
	for _, p := range recorded[:len(calls)] {
		triggers = append(triggers, p.trigger)
	}
	if want := []string{"create", "child", "resync", "resync"}; !slices.Equal(triggers, want) {
		t.Fatalf("recorded triggers %v, want %v: the edit's pass and the periodic resyncs told apart", triggers, want)
	}
	for i, c := range calls[1:] {
		if c.Trigger != "resync" {
			t.Errorf("call %d went out as %q, want resync (the wire has no child trigger)", i+2, c.Trigger)
		}
	}
	// A resync is due 3/4 to 5/4 of the interval after the pass before it ends, measured
	// from that pass's log line (not from its call, which a slow status write on a loaded
	// machine keeps from the pass's end by a second or more): the lower bound holds as is.
	// The upper one gets the queue's wake-up and the call's way to the endpoint, in-process
	// work only: 500 ms of slack on a loaded 2-core machine.
	lo, hi := interval*3/4, interval*5/4+500*time.Millisecond
	for i := 2; i < 4; i++ {
		gap := calls[i].Start.Sub(recorded[i-1].ended)
		t.Logf("resync %d came %v after the pass before ended", i-1, gap)
		if gap < lo || gap > hi {
			t.Errorf("resync %d came %v after the pass before ended, want between %v and %v", i-1, gap, lo, hi)
		}
	}
}
