package operation

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/ork/internal/statuskeep"
)

// stateFields are the keys of a persisted State, in the order of its JSON.
func stateFields() []string {
	return []string{"id", "key", "generation", "startedAt", "polls", "pollAfter", "deadline", "message", "progress", "timedOut"}
}

// StatusKeeps reports whether a CRD version's structural schema keeps status.operation
// whole, every field of a State (statuskeep.Whole). Otherwise the apiserver prunes it, and
// the operation goes to the Annotation; missing names the fields a declared operation lacks.
func StatusKeeps(root *apiextensionsv1.JSONSchemaProps) (keeps bool, missing []string) {
	return statuskeep.Whole(root, StatusField, stateFields())
}
