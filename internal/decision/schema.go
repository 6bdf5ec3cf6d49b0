package decision

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/ork/internal/statuskeep"
)

// recordFields are the keys of a LastDecision, in the order of its JSON.
func recordFields() []string { return []string{"id", "time", "trigger", "inputs", "reconciler"} }

// StatusKeeps reports whether a CRD version's structural schema keeps status.lastDecision
// whole, every field of the record (statuskeep.Whole), for ork validate's status-schema
// check; missing names the fields a declared lastDecision lacks.
func StatusKeeps(root *apiextensionsv1.JSONSchemaProps) (keeps bool, missing []string) {
	return statuskeep.Whole(root, StatusField, recordFields())
}
