package shardring

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func widget(name, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetUID(types.UID("uid-" + name))
	u.SetResourceVersion(rv)
	u.SetLabels(map[string]string{"app": name})
	return u
}

// A catch-up sends what turns what the informer was told into the new list, and only
// that: an add for a new object, a modify for a changed one or one resend names, a delete
// (the informer's last copy of that very object, else what was kept) for one no longer listed; nothing
// for the rest. Then the events are what the informer has been told.
func TestCatchUpSendsTheDifference(t *testing.T) {
	tl := newTold()
	tl.listed(&unstructured.UnstructuredList{Items: []unstructured.Unstructured{
		*widget("same", "1"), *widget("resent", "1"), *widget("changed", "1"), *widget("gone", "1"), *widget("gone-known", "1"),
		*widget("recreated", "5"),
	}}, true)
	tl.sent(watch.Event{Type: watch.Modified, Object: widget("changed", "2")})
	items := []runtime.Object{widget("same", "1"), widget("resent", "1"), widget("changed", "3"), widget("new", "4")}
	resend := func(obj runtime.Object) bool { return obj.(*unstructured.Unstructured).GetName() == "resent" }
	knownCopy := widget("gone-known", "1")
	knownCopy.Object["spec"] = map[string]any{"v": "last"}
	// The store still holds an earlier object of the name "recreated" (its delete and the
	// new one's add queued): not the one told, so not its delete's content.
	earlier := widget("recreated", "3")
	earlier.SetUID("uid-earlier")
	known := func(key string) (runtime.Object, bool) {
		switch key {
		case "ns/gone-known":
			return knownCopy, true
		case "ns/recreated":
			return earlier, true
		}
		return nil, false
	}
	events, err := tl.catchUpEvents(items, resend, known, blankUnstructured)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ev := range events {
		u := ev.Object.(*unstructured.Unstructured)
		got[u.GetName()] = fmt.Sprintf("%s rv=%s", ev.Type, u.GetResourceVersion())
		if ev.Type == watch.Deleted && u.GetName() == "gone" && (u.GetUID() != "uid-gone" || u.GetLabels()["app"] != "gone") {
			t.Errorf("the delete of gone carries %v: want its uid and labels kept", u.Object)
		}
		if u.GetName() == "recreated" && u.GetUID() != "uid-recreated" {
			t.Errorf("the delete of recreated carries uid %s: want the uid told, not the store's earlier object's", u.GetUID())
		}
		if u.GetName() == "gone-known" && u.Object["spec"] == nil {
			t.Errorf("the delete of gone-known is not the informer's last copy: %v", u.Object)
		}
	}
	want := map[string]string{
		"resent": "MODIFIED rv=1", "changed": "MODIFIED rv=3", "new": "ADDED rv=4",
		"gone": "DELETED rv=1", "gone-known": "DELETED rv=1", "recreated": "DELETED rv=5",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("catch-up events (-want +got):\n%s", d)
	}
	for _, ev := range events {
		tl.sent(ev)
	}
	keys := []string{}
	for k := range tl.objs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"ns/changed", "ns/new", "ns/resent", "ns/same"}; !slices.Equal(keys, want) {
		t.Errorf("told after the catch-up: %v, want %v", keys, want)
	}
	if again, _ := tl.catchUpEvents(items, nil, known, blankUnstructured); len(again) != 0 {
		t.Errorf("a second catch-up over the same list sends %d events, want none", len(again))
	}
}
