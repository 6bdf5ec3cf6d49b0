package run

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/orkspace/ork/internal/katalog"
)

func TestTriggerBookKeepsTheStrongestTrigger(t *testing.T) {
	b := newTriggerBook()
	b.note("ns/a", TriggerResync)
	b.note("ns/a", TriggerUpdate)
	b.note("ns/a", TriggerChild)
	if got := b.take("ns/a"); got != TriggerUpdate {
		t.Errorf("take = %s, want update (stronger than child and resync)", got)
	}
	if got := b.take("ns/a"); got != TriggerRequeue {
		t.Errorf("take with nothing pending = %s, want requeue", got)
	}
	last := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a"}}}
	b.noteDelete("ns/a", last)
	b.note("ns/a", TriggerResync)
	if got := b.take("ns/a"); got != TriggerDelete {
		t.Errorf("take after delete+resync = %s, want delete", got)
	}
	if b.tombstone("ns/a") == nil {
		t.Error("tombstone dropped by a weaker trigger")
	}
	b.note("ns/a", TriggerCreate) // re-created under the same key
	if b.tombstone("ns/a") != nil {
		t.Error("tombstone kept after the object came back")
	}
}

func TestOnlyStatusChanged(t *testing.T) {
	base := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "a", "resourceVersion": "1", "generation": int64(1)},
			"spec":     map[string]any{"replicas": int64(1)},
			"status":   map[string]any{"phase": "Pending"},
		}}
	}
	statusOnly := base()
	statusOnly.Object["status"] = map[string]any{"phase": "Ready"}
	statusOnly.SetResourceVersion("2")
	if !onlyStatusChanged(base(), statusOnly) {
		t.Error("a status write was treated as a change worth a POST: it would loop")
	}
	specChange := base()
	specChange.Object["spec"] = map[string]any{"replicas": int64(2)}
	specChange.SetResourceVersion("2")
	if onlyStatusChanged(base(), specChange) {
		t.Error("a spec change was ignored")
	}
	labelChange := base()
	labelChange.SetLabels(map[string]string{"a": "b"})
	if onlyStatusChanged(base(), labelChange) {
		t.Error("a label change was ignored")
	}
}

func TestTypeKey(t *testing.T) {
	tests := map[[2]string]string{
		{"apps", "deployments"}:            "deployment",
		{"", "services"}:                   "service",
		{"", "endpoints"}:                  "endpoints",
		{"example.com", "widgets"}:         "widgets.example.com",
		{"networking.k8s.io", "ingresses"}: "ingress",
	}
	for in, want := range tests {
		if got := typeKey(in[0], in[1]); got != want {
			t.Errorf("typeKey(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

type panickingReconciler struct{}

func (panickingReconciler) reconcile(context.Context, *controller, input) decision {
	var m map[string]int
	m["boom"]++ // a nil-map write, the kind of bug a reconciler ships
	return decision{}
}

func TestPanicInAReconcileIsAFailedReconcile(t *testing.T) {
	c := &controller{rec: panickingReconciler{}, log: slog.New(slog.DiscardHandler)}
	d := c.safeReconcile(context.Background(), input{key: "ns/a"})
	if d.success || d.action != actionBackoff || d.reason != reasonPanic || !strings.Contains(d.message, "assignment to entry in nil map") {
		t.Errorf("decision after a panic = %+v, want a backed-off failure naming the panic", d)
	}
}

// An onCreate child the cache does not know yet (it lags behind an earlier pass's create)
// must not be overwritten: the create finds it and leaves a user's later edit alone.
func TestCreateOnlyNeverOverwritesAnExistingObject(t *testing.T) {
	existing := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "site", "namespace": "ns"},
		"data":     map[string]any{"level": "edited-by-user"},
	}}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), existing)
	c := &controller{e: &Engine{dyn: dyn, opts: Options{Metrics: NewMetrics()}}, crd: &katalog.CRD{Name: "site"}}
	desired := existing.DeepCopy()
	desired.Object["data"] = map[string]any{"level": "info"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

	if err := c.applyOne(context.Background(), planned{obj: desired, gvr: gvr, force: true, createOnly: true}); err != nil {
		t.Fatalf("create-only of an existing object: %v, want no error", err)
	}
	got, err := dyn.Resource(gvr).Namespace("ns").Get(context.Background(), "site", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if level, _, _ := unstructured.NestedString(got.Object, "data", "level"); level != "edited-by-user" {
		t.Errorf("data.level = %q after a create-only pass, want the user's edit kept", level)
	}
	for _, a := range dyn.Actions() {
		if v := a.GetVerb(); v != "create" && v != "get" {
			t.Errorf("create-only pass sent a %q: only a create is allowed", v)
		}
	}
}
