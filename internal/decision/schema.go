package decision

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/ork/internal/statuskeep"
)

// recordFields are the keys of a LastDecision, in the order of its JSON, that every custom
// resource's record holds: targetField only a CRD with a target writes.
func recordFields() []string { return []string{"id", "time", "trigger", "inputs", "reconciler"} }

// targetField is the key of LastDecision.Target.
const targetField = "target"

// StatusKeeps reports whether a CRD version's structural schema keeps status.lastDecision
// whole, every field of the record (statuskeep.Whole), for ork validate's status-schema
// check; missing names the fields a declared lastDecision lacks.
func StatusKeeps(root *apiextensionsv1.JSONSchemaProps) (keeps bool, missing []string) {
	return statuskeep.Whole(root, StatusField, recordFields())
}

// StatusKeepsTargeted is StatusKeeps for a CRD with a target (docs/multicluster.md), whose
// record also names the cluster: a declared lastDecision must declare target too.
func StatusKeepsTargeted(root *apiextensionsv1.JSONSchemaProps) (keeps bool, missing []string) {
	return statuskeep.Whole(root, StatusField, append(recordFields(), targetField))
}
