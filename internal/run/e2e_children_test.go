package run_test

import (
	"fmt"
	"regexp"
	"slices"
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
)

// editChild merge-patches a child as a person with kubectl would.
func (f *fixture) editChild(gvr schema.GroupVersionResource, name, patch string, subresource ...string) {
	f.t.Helper()
	if _, err := f.dyn.Resource(gvr).Namespace(f.ns).Patch(f.t.Context(), name, types.MergePatchType, []byte(patch),
		metav1.PatchOptions{FieldManager: "kubectl-edit"}, subresource...); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) triggers(trigger string) float64 {
	return testutil.ToFloat64(f.metrics.TriggersTotal.WithLabelValues("app", trigger))
}

// waitPassesDone waits until every call the endpoint received has finished its pass in
// ork (status written, or nothing to write): ork_reconcile_total counts finished passes.
func (f *fixture) waitPassesDone(ep *endpoint) {
	f.t.Helper()
	f.eventually("the passes of every call so far", func() (bool, error) {
		n := len(ep.Calls())
		var done float64
		for _, r := range []string{"success", "error", "requeue"} {
			done += testutil.ToFloat64(f.metrics.ReconcileTotal.WithLabelValues("app", r, "stable"))
		}
		return int(done) >= n, nil
	})
}

// callsFor counts the requests the endpoint received for one CR.
func (ep *endpoint) callsFor(name string) []call {
	var out []call
	for _, c := range ep.recorded() {
		if c.crName() == name {
			out = append(out, c)
		}
	}
	return out
}

// 10.12 ork's own writes coming back cost no call: neither the children's creation, nor
// the restore of a field someone edited, nor a child's status change (the children payload
// is off). Each foreign edit costs exactly one call, no sooner than ChildMinInterval after
// the pass before. Events of one type arrive in order, so a foreign edit's call is a fence:
// every earlier event of that type has been handled when it arrives.
func TestOwnWritesCostNoCall(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	const interval = 500 * time.Millisecond
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil, func(o *run.Options) { o.ChildMinInterval = interval })
	f.createCR("web", map[string]any{})
	f.waitReady("web", "True")
	f.eventually("children", func() (bool, error) {
		_, errD := f.get(deployments, "web")
		_, errS := f.get(services, "web-svc")
		return errD == nil && errS == nil, nil
	})

	// Each edit waits until the pass before it is over: an edit that lands while a pass runs
	// may be covered by that pass's own apply, and cost no call.
	f.editChild(deployments, "web", `{"spec":{"replicas":7}}`) // ork owns replicas: restored
	ep.nextMatching(t, "after the replicas edit", func(c call) bool { return c.trigger() == "resync" })
	f.waitPassesDone(ep)
	f.eventually("replicas restored", func() (bool, error) {
		d, err := f.get(deployments, "web")
		r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		return err == nil && r == 2, err
	})
	f.editChild(deployments, "web", `{"status":{"observedGeneration":9}}`, "status") // status only
	f.editChild(services, "web-svc", `{"metadata":{"labels":{"team":"a"}}}`)         // fence for services
	ep.nextMatching(t, "after the service edit", func(c call) bool { return c.trigger() == "resync" })
	f.waitPassesDone(ep)
	f.editChild(deployments, "web", `{"metadata":{"labels":{"team":"a"}}}`) // fence for deployments
	ep.nextMatching(t, "after the deployment label edit", func(c call) bool { return c.trigger() == "resync" })

	if got := f.triggers("child"); got != 3 {
		t.Errorf("%v child triggers, want 3 (the three foreign edits; echoes and status changes are free)", got)
	}
	calls := ep.callsFor("web")
	if len(calls) != 4 {
		t.Errorf("%d calls for web, want 4: create and one per foreign edit", len(calls))
	}
	for i := 2; i < len(calls); i++ {
		if gap := calls[i].at.Sub(calls[i-1].at); gap < interval-50*time.Millisecond {
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
	ep := newEndpoint(t, func(c call) response {
		return jsonResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"type": "configmap", "fields": map[string]any{"name": "web-config",
				"data": map[string]any{"generatedAt": fmt.Sprint(n.Add(1))}}},
		}})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, managed: []string{"/configmaps"}}), nil)
	f.createCR("web", map[string]any{})
	f.waitReady("web", "True")
	for i := range 2 { // fences: a foreign label edit, each answered by one call
		f.eventually("configmap", func() (bool, error) { _, err := f.get(configmaps, "web-config"); return err == nil, nil })
		f.editChild(configmaps, "web-config", fmt.Sprintf(`{"metadata":{"labels":{"edit":"%d"}}}`, i))
		ep.nextMatching(t, "after the edit", func(c call) bool { return c.trigger() == "resync" })
		f.waitPassesDone(ep)
	}
	if calls := ep.callsFor("web"); len(calls) != 3 {
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
	ep := newEndpoint(t, func(c call) response {
		if n.Add(1) < 3 {
			return jsonResponse(map[string]any{"result": "ok", "requeueAfter": "1ms"})
		}
		return jsonResponse(map[string]any{"result": "ok"})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{})
	calls := []call{ep.next(t), ep.next(t), ep.next(t)}
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].at.Sub(calls[i-1].at); gap < 100*time.Millisecond {
			t.Errorf("requeue %d came %v after the call before, want at least the 100ms floor", i, gap)
		}
	}
}

// 10.5 Without replicas in the result ork does not own the field: an autoscaler's scale
// survives ork's next pass.
func TestAutoscalerKeepsReplicasTheReconcilerDoesNotSend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(c call) response {
		return jsonResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": "nginx:1.27"}},
		}})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{"v": 1})
	f.waitReady("web", "True")
	// As the HorizontalPodAutoscaler does: through the scale subresource, its own manager.
	if _, err := f.dyn.Resource(deployments).Namespace(f.ns).Patch(t.Context(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{FieldManager: "horizontal-pod-autoscaler"}, "scale"); err != nil {
		t.Fatal(err)
	}
	f.patchSpec("web", `{"spec":{"v":2}}`)
	f.eventually("generation 2 reconciled", func() (bool, error) {
		og, _, _ := unstructured.NestedInt64(f.getCR("web").Object, "status", "observedGeneration")
		return og == 2, nil
	})
	dep, err := f.get(deployments, "web")
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
	ep := newEndpoint(t, func(c call) response {
		img, _, _ := unstructured.NestedString(c.body, "object", "spec", "image")
		child, found, _ := unstructured.NestedMap(c.body, "prepared", "children", "deployment", "web")
		if !found {
			return jsonResponse(map[string]any{"result": "ok", "resources": []any{
				map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": img}},
			}})
		}
		u := unstructured.Unstructured{Object: child}
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		cs[0].(map[string]any)["image"] = img
		_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
		return jsonResponse(map[string]any{"result": "ok", "resources": []any{u.Object}})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL,
		payload: "              children:\n                enabled: true\n"}), nil)
	f.createCR("web", map[string]any{"image": "nginx:1.27"})
	f.waitReady("web", "True")
	f.eventually("revision 1", func() (bool, error) {
		d, err := f.get(deployments, "web")
		return err == nil && d.GetAnnotations()["deployment.kubernetes.io/revision"] == "1", nil
	})
	for i, img := range []string{"nginx:1.28", "nginx:1.29"} {
		f.patchSpec("web", fmt.Sprintf(`{"spec":{"image":%q}}`, img))
		want := fmt.Sprint(i + 2)
		f.eventually("rollout to "+img, func() (bool, error) {
			c := readyCondition(f.getCR("web"))
			d, err := f.get(deployments, "web")
			if err != nil || c == nil {
				return false, err
			}
			if c["status"] != "True" {
				return false, fmt.Errorf("Ready %v", c)
			}
			return image(d) == img && d.GetAnnotations()["deployment.kubernetes.io/revision"] == want, nil
		})
	}
	d, _ := f.get(deployments, "web")
	for _, mf := range d.GetManagedFields() {
		if mf.Manager != run.FieldManager || mf.FieldsV1 == nil {
			continue
		}
		raw := string(mf.FieldsV1.Raw)
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
	ep := newEndpoint(t, okWithChildren)
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil)
	f.createCR("web", map[string]any{"v": 1})
	f.waitReady("web", "True")
	f.patchSpec("web", `{"metadata":{"labels":{"team":"a"}}}`) // an update with nothing to do
	ep.nextMatching(t, "the label update", func(c call) bool { return c.trigger() == "update" })
	f.patchSpec("web", `{"spec":{"v":2}}`)
	f.eventually("the Event of generation 2", func() (bool, error) {
		for _, e := range f.events("web") {
			if e.Reason == "Reconciled" && strings.Contains(e.Message, "generation 2") {
				return true, nil
			}
		}
		return false, nil
	})
	var n int32
	for _, e := range f.events("web") {
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
	ep := newEndpoint(t, func(c call) response {
		return jsonResponse(map[string]any{"result": "ok", "resources": []any{
			map[string]any{"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": map[string]any{"name": "web"}},
		}})
	})
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), faults.config(env.Config),
		func(o *run.Options) { o.DiscoveryResetInterval = time.Hour })
	before := faults.count("GET discovery")
	f.createCR("web", map[string]any{})
	for range 6 {
		ep.next(t)
	}
	got := f.waitReady("web", "False")
	if msg, _ := readyCondition(got)["message"].(string); !strings.Contains(msg, "Deploymnet") {
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
	f.installCRD("Widget", "widgets")
	widgets := schema.GroupVersionResource{Group: f.group, Version: "v1", Resource: "widgets"}
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
`, f.group)
	set := f.loadKatalog(doc)
	f.start(set, nil)
	cr := f.createCR("site", map[string]any{"size": 3})
	f.waitReady("site", "True")
	w, err := f.get(widgets, "site-widget")
	if err != nil {
		t.Fatalf("the customs entry was not applied: %v", err)
	}
	assertOwnedByOrk(t, w, cr)
	if _, err := f.get(configmaps, "site-settings"); err != nil {
		t.Errorf("the configMaps entry beside it: %v", err)
	}
	// The Widget type is watched: deleting it re-creates it.
	if err := f.dyn.Resource(widgets).Namespace(f.ns).Delete(t.Context(), "site-widget", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.eventually("the widget re-created", func() (bool, error) {
		_, err := f.get(widgets, "site-widget")
		return err == nil, nil
	})
}

// reconcile.resync calls again for every CR, each at its own jittered time, between 3/4 and
// 5/4 of the interval after its last pass, and ork records it as trigger resync: a pass a
// child's edit started goes to the reconciler as resync too (SPEC's five triggers), but ork
// records it as child, and it moves the next resync on.
func TestPeriodicResync(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	const interval = 2 * time.Second
	f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, resync: interval.String()}), nil)
	f.createCR("web", map[string]any{})
	calls := []call{ep.next(t)}
	f.waitPassesDone(ep)
	f.editChild(deployments, "web", `{"metadata":{"labels":{"edit":"1"}}}`)
	for len(calls) < 4 {
		calls = append(calls, ep.next(t))
	}
	f.waitPassesDone(ep)
	// Each pass of web logs its recorded trigger, in the order of its calls (one call per
	// pass, one pass of a key at a time).
	recorded := regexp.MustCompile(`msg=reconciled crd=app key=`+regexp.QuoteMeta(f.ns+"/web")+` trigger=(\w+)`).
		FindAllStringSubmatch(f.logs.String(), -1)
	if len(recorded) < len(calls) {
		t.Fatalf("%d passes logged for %d calls", len(recorded), len(calls))
	}
	var triggers []string
	for _, m := range recorded[:len(calls)] {
		triggers = append(triggers, m[1])
	}
	if want := []string{"create", "child", "resync", "resync"}; !slices.Equal(triggers, want) {
		t.Fatalf("recorded triggers %v, want %v: the edit's pass and the periodic resyncs told apart", triggers, want)
	}
	for i, c := range calls[1:] {
		if c.trigger() != "resync" {
			t.Errorf("call %d went out as %q, want resync (the wire has no child trigger)", i+2, c.trigger())
		}
	}
	// The window is measured from the call before, which arrives before its pass ends: the
	// lower bound holds as is; the upper one gets that pass (a status write) plus scheduling
	// on a loaded 2-core machine: 500 ms of slack.
	lo, hi := interval*3/4, interval*5/4+500*time.Millisecond
	for i := 2; i < 4; i++ {
		if gap := calls[i].at.Sub(calls[i-1].at); gap < lo || gap > hi {
			t.Errorf("resync %d came %v after the pass before, want between %v and %v", i-1, gap, lo, hi)
		}
	}
}
