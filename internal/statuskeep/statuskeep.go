// Package statuskeep tells whether a CRD's structural schema keeps a field ork writes under
// status whole, or whether the apiserver prunes it (all of it, or the keys it does not
// declare).
package statuskeep

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Whole reports whether a CRD version's structural schema (its openAPIV3Schema) keeps
// status.<field> whole: status preserves unknown fields and does not declare field, or
// field is declared and preserves unknown fields or declares every key in keys. missing
// names the keys a declared field lacks (nil when it is not declared at all). A nil schema
// prunes nothing.
func Whole(root *apiextensionsv1.JSONSchemaProps, field string, keys []string) (keeps bool, missing []string) {
	if root == nil {
		return true, nil
	}
	status, declared := root.Properties["status"]
	if !declared {
		return preserves(root), nil
	}
	f, declared := status.Properties[field]
	if !declared {
		return preserves(&status), nil
	}
	if preserves(&f) {
		return true, nil
	}
	for _, k := range keys {
		if _, ok := f.Properties[k]; !ok {
			missing = append(missing, k)
		}
	}
	return len(missing) == 0, missing
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}
