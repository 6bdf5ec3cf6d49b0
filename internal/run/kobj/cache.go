package kobj

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// StripManagedFields drops managedFields from cached objects: they are large and ork never
// reads them.
func StripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// OwnerUIDIndex indexes an object by the uid of its controller, for the children's caches.
func OwnerUIDIndex(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	if ref := metav1.GetControllerOf(m); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// DeletedMeta is DeletedObject for children, whose cache may hold their metadata only.
func DeletedMeta(obj any) (metav1.Object, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if obj == nil {
		return nil, false
	}
	m, err := meta.Accessor(obj)
	return m, err == nil
}

// DeletedObject is the object of an informer event, unwrapping the tombstone a delete
// missed during a re-list arrives as.
func DeletedObject(obj any) (*unstructured.Unstructured, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok
}

// KeyOf is the queue key of an object.
func KeyOf(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
