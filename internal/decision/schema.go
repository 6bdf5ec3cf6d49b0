package decision

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// recordFields are the keys of a LastDecision, in the order of its JSON, that every custom
// resource's record holds: targetField only a CRD with a target writes.
func recordFields() []string { return []string{"id", "time", "trigger", "inputs", "reconciler"} }

// targetField is the key of LastDecision.Target.
const targetField = "target"

// StatusKeeps reports whether a CRD version's structural schema (its openAPIV3Schema) keeps
// status.lastDecision whole, for ork validate's status-schema check: status preserves
// unknown fields and does not declare lastDecision, or lastDecision is declared and
// preserves unknown fields or declares every field of the record. missing names the fields
// a declared lastDecision lacks (nil when it is not declared at all). A nil schema prunes
// nothing.
func StatusKeeps(root *apiextensionsv1.JSONSchemaProps) (keeps bool, missing []string) {
	return statusKeeps(root, recordFields())
}

// StatusKeepsTargeted is StatusKeeps for a CRD with a target (docs/multicluster.md), whose
// record also names the cluster: a declared lastDecision must declare target too.
func StatusKeepsTargeted(root *apiextensionsv1.JSONSchemaProps) (keeps bool, missing []string) {
	return statusKeeps(root, append(recordFields(), targetField))
}

func statusKeeps(root *apiextensionsv1.JSONSchemaProps, fields []string) (keeps bool, missing []string) {
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
	for _, f := range fields {
		if _, ok := rec.Properties[f]; !ok {
			missing = append(missing, f)
		}
	}
	return len(missing) == 0, missing
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}
