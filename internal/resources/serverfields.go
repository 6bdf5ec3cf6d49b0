package resources

import (
	"strings"

	"github.com/orkspace/ork/internal/naming"
)

// serverMetadata are the metadata fields the apiserver fills in. A reconciler that edits an
// object from prepared.children and returns it sends them back; applied, a stale
// resourceVersion is a spurious 409, and uid, managedFields or creationTimestamp make the
// apply fail or claim fields nobody should own.
var serverMetadata = []string{
	"resourceVersion", "uid", "managedFields", "creationTimestamp", "generation",
	"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds",
}

// controllerAnnotations are written by the object's own controller (or kubectl's
// client-side apply). Applied back with ork's force they would start a tug of war: the
// Deployment controller bumps deployment.kubernetes.io/revision on every rollout, ork would
// set the old value back on its next pass, and so on.
var controllerAnnotations = []string{
	"deployment.kubernetes.io/",
	"pv.kubernetes.io/",
	"kubectl.kubernetes.io/last-applied-configuration",
	"volume.kubernetes.io/selected-node",
	"volume.kubernetes.io/storage-provisioner",
	"volume.beta.kubernetes.io/storage-provisioner",
}

// stripServerFields removes from a full object what the server or other controllers own:
// status, server-populated metadata and controller annotations, and ork's digest of its
// last write (naming.AppliedAnnotation: ork sets it anew on every write). obj is modified.
func stripServerFields(obj map[string]any) {
	delete(obj, "status")
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	for _, f := range serverMetadata {
		delete(meta, f)
	}
	ann, ok := meta["annotations"].(map[string]any)
	if !ok {
		return
	}
	for k := range ann {
		// ork's own bookkeeping on a child (its digest, the decision that wrote it) comes
		// back with a child the reconciler returns whole: it is not the reconciler's intent.
		if isControllerAnnotation(k) || k == naming.AppliedAnnotation || k == naming.DecisionAnnotation {
			delete(ann, k)
		}
	}
	if len(ann) == 0 {
		delete(meta, "annotations")
	}
}

func isControllerAnnotation(key string) bool {
	for _, p := range controllerAnnotations {
		if key == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(key, p)) {
			return true
		}
	}
	return false
}
