package decision

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// recordFields are the keys of a LastDecision, in the order of its JSON; the last two are
// written with reconcile.remote.skipUnchanged only.
func recordFields() []string {
	return []string{"id", "time", "trigger", "inputs", "reconciler", "children", "requeueAfter"}
}

// keptFields are the keys a declared lastDecision must keep: those skipUnchanged writes too
// when it is on.
func keptFields(skipUnchanged bool) []string {
	f := recordFields()
	if !skipUnchanged {
		return f[:5]
	}
	return f
}

// StatusKeeps reports whether a CRD version's structural schema (its openAPIV3Schema) keeps
// status.lastDecision whole, for ork validate's status-schema check: status preserves
// unknown fields and does not declare lastDecision, or lastDecision is declared and
// preserves unknown fields or declares every field of the record. missing names the fields
// a declared lastDecision lacks (nil when it is not declared at all). A nil schema prunes
// nothing. skipUnchanged: the CRD's reconcile.remote.skipUnchanged is on, whose keys must be
// kept too.
func StatusKeeps(root *apiextensionsv1.JSONSchemaProps, skipUnchanged bool) (keeps bool, missing []string) {
	if root == nil {
		return true, nil
	}
	status, declared := root.Properties["status"]
	if !declared {
		return preserves(root), nil
	}
	rec, declared := status.Properties[StatusField]
	if !declared {
		return preserves(&status), nil
	}
	if preserves(&rec) {
		return true, nil
	}
	for _, f := range keptFields(skipUnchanged) {
		if _, ok := rec.Properties[f]; !ok {
			missing = append(missing, f)
		}
	}
	return len(missing) == 0, missing
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}
