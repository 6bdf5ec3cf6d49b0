package decision

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
)

// Inputs are what a reconciler's answer depends on. Not the trigger, the children or the
// status: they change across a restart (a resync, a fresh cache) while the answer does not,
// and a digest that changed with them could never tell that a call would be asked the same
// question again.
type Inputs struct {
	Generation  int64
	Spec        any
	Labels      map[string]string
	Annotations map[string]string
	// Args are the CRD's rendered args; nil when it has none.
	Args any
	// Related maps each related object's name, as the request names it, to its
	// resourceVersion.
	Related map[string]string
}

// InputsOf are the inputs of a custom resource, with its rendered args and its related
// objects' resourceVersions by name.
func InputsOf(cr *unstructured.Unstructured, args any, related map[string]string) Inputs {
	return Inputs{
		Generation:  cr.GetGeneration(),
		Spec:        cr.Object["spec"],
		Labels:      cr.GetLabels(),
		Annotations: cr.GetAnnotations(),
		Args:        args,
		Related:     related,
	}
}

// ownAnnotations are those ork writes on a custom resource itself: its own bookkeeping, not
// an input.
var ownAnnotations = [...]string{naming.OperationAnnotation, naming.DecisionAnnotation}

// InputsDigest is "sha256:" and the hex SHA-256 of the inputs' canonical JSON (map keys
// sorted), without the annotations ork writes itself. Nil and empty maps digest alike.
func InputsDigest(in Inputs) (string, error) {
	annotations := in.Annotations
	for _, k := range ownAnnotations {
		if _, ok := annotations[k]; ok {
			annotations = maps.Clone(annotations)
			for _, k := range ownAnnotations {
				delete(annotations, k)
			}
			break
		}
	}
	doc := struct {
		Generation  int64             `json:"generation"`
		Spec        any               `json:"spec"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		Args        any               `json:"args"`
		Related     map[string]string `json:"related"`
	}{in.Generation, in.Spec, nonNil(in.Labels), nonNil(annotations), in.Args, nonNil(in.Related)}
	b, err := json.Marshal(doc) // encoding/json sorts map keys: canonical
	if err != nil {
		return "", fmt.Errorf("digest inputs: %w", err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
