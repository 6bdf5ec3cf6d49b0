package decision

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/ork/internal/statuskeep"
)

// recordFields are the keys every LastDecision holds, in the order of its JSON.
func recordFields() []string { return []string{"id", "time", "trigger", "inputs", "reconciler"} }

// targetField is the key of LastDecision.Target, which only a CRD with a target writes.
const targetField = "target"

// skipFields are the keys only reconcile.remote.skipUnchanged writes.
func skipFields() []string { return []string{"children", "requeueAfter"} }

// Writes says which of the record's optional keys a CRD's passes write.
type Writes struct {
	// Target: the CRD names a target (docs/multicluster.md); its record names the cluster.
	Target bool
	// SkipUnchanged: reconcile.remote.skipUnchanged is on.
	SkipUnchanged bool
}

// StatusKeeps reports whether a CRD version's structural schema keeps status.lastDecision
// whole, every key its passes write (statuskeep.Whole), for ork validate's status-schema
// check; missing names the keys a declared lastDecision lacks.
func StatusKeeps(root *apiextensionsv1.JSONSchemaProps, w Writes) (keeps bool, missing []string) {
	keys := recordFields()
	if w.Target {
		keys = append(keys, targetField)
	}
	if w.SkipUnchanged {
		keys = append(keys, skipFields()...)
	}
	return statuskeep.Whole(root, StatusField, keys)
}
