package operation

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// stateFields are the keys of a persisted State, in the order of its JSON.
func stateFields() []string {
	return []string{"id", "key", "generation", "startedAt", "polls", "pollAfter", "deadline", "message", "progress", "timedOut"}
}

// StatusKeeps reports whether a CRD version's structural schema (its openAPIV3Schema) keeps
// status.operation whole: status preserves unknown fields and does not declare operation, or
// operation is declared and preserves unknown fields or declares every field of a State.
// Otherwise the apiserver prunes it, and the operation goes to the Annotation; missing then
// names the fields a declared operation lacks (nil when it is not declared at all). A nil
// schema prunes nothing.
func StatusKeeps(root *apiextensionsv1.JSONSchemaProps) (keeps bool, missing []string) {
	if root == nil {
		return true, nil
	}
	status, declared := root.Properties["status"]
	if !declared {
		return preserves(root), nil
	}
	op, declared := status.Properties[StatusField]
	if !declared {
		return preserves(&status), nil
	}
	if preserves(&op) {
		return true, nil
	}
	for _, f := range stateFields() {
		if _, ok := op.Properties[f]; !ok {
			missing = append(missing, f)
		}
	}
	return len(missing) == 0, missing
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}
