package resources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
)

// AppliedAnnotation is naming.AppliedAnnotation, kept here for the engine (internal/run).
const AppliedAnnotation = naming.AppliedAnnotation

// MarkApplied sets naming.AppliedAnnotation on obj, ready to write, to the digest of obj without
// it, and returns that digest (zero if obj does not encode: no write is then skipped for
// it). It modifies obj.
func MarkApplied(obj *unstructured.Unstructured) [sha256.Size]byte {
	ann := obj.GetAnnotations()
	_, applied := ann[naming.AppliedAnnotation]
	_, decided := ann[naming.DecisionAnnotation]
	if applied || decided {
		// The digest is of the intent: ork's own digest and decision id are not part of it,
		// so that a child returned whole with them digests as one returned without.
		delete(ann, naming.AppliedAnnotation)
		delete(ann, naming.DecisionAnnotation)
		if len(ann) == 0 {
			ann = nil // no annotations: the same digest as an object that never had any
		}
		obj.SetAnnotations(ann)
	}
	b, err := json.Marshal(obj.Object) // encoding/json sorts map keys: a stable digest
	if err != nil {
		return [sha256.Size]byte{}
	}
	sum := sha256.Sum256(b)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[naming.AppliedAnnotation] = hex.EncodeToString(sum[:])
	obj.SetAnnotations(ann)
	return sum
}

// IsServerAnnotation reports whether key is an annotation ork treats as the server's (or
// the object's own controller's): dropped from full objects a reconciler returns, and a
// write of it alone is not a change to ork's object.
func IsServerAnnotation(key string) bool { return isControllerAnnotation(key) }
