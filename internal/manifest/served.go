package manifest

import (
	"crypto/sha256"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// AsServed returns a copy of obj with what the API server would have assigned and a file
// lacks: the namespace "default" (when namespaced), a uid derived from the object's kind,
// namespace and name (the same on every run), generation 1 and resourceVersion "1". Values
// the file sets are kept.
func AsServed(obj *unstructured.Unstructured, namespaced bool) *unstructured.Unstructured {
	out := obj.DeepCopy()
	if namespaced && out.GetNamespace() == "" {
		out.SetNamespace("default")
	}
	if out.GetUID() == "" {
		sum := sha256.Sum256([]byte(out.GroupVersionKind().GroupKind().String() + "/" + out.GetNamespace() + "/" + out.GetName()))
		out.SetUID(types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])))
	}
	if out.GetGeneration() == 0 {
		out.SetGeneration(1)
	}
	if out.GetResourceVersion() == "" {
		out.SetResourceVersion("1")
	}
	return out
}
