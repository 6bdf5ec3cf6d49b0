package kobj

import (
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// OnlyStatusChanged reports whether two versions differ only in status, resourceVersion or
// managedFields. It compares in place: it runs for every update event.
func OnlyStatusChanged(a, b *unstructured.Unstructured) bool {
	return SameExcept(a.Object, b.Object, "status", "metadata") &&
		SameExcept(NestedMap(a.Object, "metadata"), NestedMap(b.Object, "metadata"), "resourceVersion", "managedFields")
}

// OnlyAnnotationChanged reports whether b differs from a only in the annotation key (and
// status, resourceVersion, managedFields): ork's own write of that annotation coming back,
// no news.
func OnlyAnnotationChanged(a, b *unstructured.Unstructured, key string) bool {
	if !SameExcept(a.Object, b.Object, "status", "metadata") ||
		!SameExcept(NestedMap(a.Object, "metadata"), NestedMap(b.Object, "metadata"), "resourceVersion", "managedFields", "annotations") {
		return false
	}
	aa, ba := a.GetAnnotations(), b.GetAnnotations()
	if aa[key] == ba[key] {
		return false
	}
	for k, v := range aa {
		if w, ok := ba[k]; k != key && (!ok || w != v) {
			return false
		}
	}
	for k := range ba {
		if _, ok := aa[k]; k != key && !ok {
			return false
		}
	}
	return true
}

// OnlyFinalizerAdded reports whether b differs from a only by finalizer added (and status,
// resourceVersion, managedFields): ork's own finalizer write coming back, no news.
func OnlyFinalizerAdded(a, b *unstructured.Unstructured, finalizer string) bool {
	if slices.Contains(a.GetFinalizers(), finalizer) || !slices.Contains(b.GetFinalizers(), finalizer) {
		return false
	}
	if !SameExcept(a.Object, b.Object, "status", "metadata") ||
		!SameExcept(NestedMap(a.Object, "metadata"), NestedMap(b.Object, "metadata"), "resourceVersion", "managedFields", "finalizers") {
		return false
	}
	without := slices.DeleteFunc(slices.Clone(b.GetFinalizers()), func(f string) bool { return f == finalizer })
	return slices.Equal(a.GetFinalizers(), without)
}

// SameExcept reports whether maps a and b are equal apart from the keys skip.
func SameExcept(a, b map[string]any, skip ...string) bool {
	count := func(m map[string]any) int {
		n := len(m)
		for _, k := range skip {
			if _, ok := m[k]; ok {
				n--
			}
		}
		return n
	}
	if count(a) != count(b) {
		return false
	}
	for k, va := range a {
		if slices.Contains(skip, k) {
			continue
		}
		vb, ok := b[k]
		if !ok || !EqualJSON(va, vb) {
			return false
		}
	}
	return true
}

func NestedMap(m map[string]any, key string) map[string]any {
	out, _ := m[key].(map[string]any)
	return out
}

// ChildStatusOnly reports whether a child's change touched nothing but its status. From a
// metadata-only cache that is: the same generation (a spec change bumps it), not zero (kinds
// without one, ConfigMaps say, have no status either), and the same labels, annotations,
// owners, finalizers and deletion.
func ChildStatusOnly(oldObj, newObj any) bool {
	if a, ok := oldObj.(*unstructured.Unstructured); ok {
		if b, ok := newObj.(*unstructured.Unstructured); ok {
			return OnlyStatusChanged(a, b)
		}
	}
	a, errA := meta.Accessor(oldObj)
	b, errB := meta.Accessor(newObj)
	if errA != nil || errB != nil || a.GetGeneration() == 0 || a.GetGeneration() != b.GetGeneration() {
		return false
	}
	return maps.Equal(a.GetLabels(), b.GetLabels()) && maps.Equal(a.GetAnnotations(), b.GetAnnotations()) &&
		slices.Equal(a.GetFinalizers(), b.GetFinalizers()) && EqualOwners(a.GetOwnerReferences(), b.GetOwnerReferences()) &&
		(a.GetDeletionTimestamp() == nil) == (b.GetDeletionTimestamp() == nil)
}

func EqualOwners(a, b []metav1.OwnerReference) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.OwnerReference) bool {
		return x.UID == y.UID && x.Name == y.Name && x.Kind == y.Kind && x.APIVersion == y.APIVersion &&
			ptr.Deref(x.Controller, false) == ptr.Deref(y.Controller, false)
	})
}

// CompareRV orders two resourceVersions: -1, 0 or 1 as a is older than, the same as, or
// newer than b. resourceVersions are opaque to clients, but every apiserver backed by etcd
// issues increasing integers; when either is not one, the answer is 1 unless they are equal
// ("newer": the cautious answer everywhere it is asked, costing a read or a call at most).
func CompareRV(a, b string) int {
	if a == b {
		return 0
	}
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	switch {
	case errA != nil || errB != nil, x > y:
		return 1
	case x < y:
		return -1
	}
	return 0
}
