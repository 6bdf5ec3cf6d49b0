package finalizer

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The patch sets the whole list computed from the object it carries the uid and
// resourceVersion of: another controller's entries stay, in their order.
func TestPatchKeepsOtherFinalizers(t *testing.T) {
	tests := []struct {
		name    string
		have    []string
		present bool
		want    string
	}{
		{"add to none", nil, true,
			`{"metadata":{"finalizers":["orkestra.orkspace.io/remote"],"resourceVersion":"7","uid":"u"}}`},
		{"add after another's", []string{"example.com/other"}, true,
			`{"metadata":{"finalizers":["example.com/other","orkestra.orkspace.io/remote"],"resourceVersion":"7","uid":"u"}}`},
		{"remove, another's stays", []string{"a.io/x", Name, "b.io/y"}, false,
			`{"metadata":{"finalizers":["a.io/x","b.io/y"],"resourceVersion":"7","uid":"u"}}`},
		{"remove the last: the key goes", []string{Name}, false,
			`{"metadata":{"finalizers":null,"resourceVersion":"7","uid":"u"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{}}
			obj.SetUID("u")
			obj.SetResourceVersion("7")
			obj.SetFinalizers(tt.have)
			if got := string(patch(obj, Name, tt.present)); got != tt.want {
				t.Errorf("patch = %s\nwant    %s", got, tt.want)
			}
		})
	}
}

// An add whose precondition fails because the object was deleted meanwhile is not sent
// again: the apiserver forbids new finalizers on a deleting object, so a second patch would
// only fail the pass. Set returns the deleting object as read, without ork's finalizer.
func TestAddToAnObjectDeletedMeanwhileIsNotSent(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "myorg.io", Version: "v1", Resource: "webapps"}
	stale := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp"}}
	stale.SetName("a")
	stale.SetNamespace("default")
	stale.SetUID("u")
	stale.SetResourceVersion("7")
	deleting := stale.DeepCopy()
	deleting.SetResourceVersion("8")
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	deleting.SetFinalizers([]string{"example.com/other"})

	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "WebAppList"}, deleting)
	var patches int
	client.PrependReactor("patch", "webapps", func(k8stesting.Action) (bool, runtime.Object, error) {
		patches++
		return true, nil, apierrors.NewConflict(gvr.GroupResource(), "a",
			errors.New("Precondition failed: ResourceVersion in precondition: 7, ResourceVersion in object meta: 8"))
	})
	out, err := Set(context.Background(), client.Resource(gvr).Namespace("default"), stale, true, Options{})
	if err != nil {
		t.Fatalf("Set: %v", err)
	}
	if patches != 1 {
		t.Errorf("%d patches, want 1: the add to the deleting object was sent again", patches)
	}
	if out == nil || out.GetDeletionTimestamp() == nil || Has(out) {
		t.Errorf("Set returned %v, want the deleting object as read, without ork's finalizer", out)
	}
}
