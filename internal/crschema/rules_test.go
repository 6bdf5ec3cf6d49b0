package crschema

import "testing"

// The path of a rule in the internal CRD becomes its path in the v1 manifest, so that a
// finding stands at the rule's line: a schema all versions share was moved to spec.validation.
func TestManifestPath(t *testing.T) {
	tests := map[string]string{
		"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule":                    "spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-validations[0].rule",
		"spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[a-b].x-kubernetes-validations[2]": "spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.a-b.x-kubernetes-validations[2]",
		"spec.validation.openAPIV3Schema": "spec.versions[0].schema.openAPIV3Schema",
	}
	for in, want := range tests {
		if got := manifestPath(in); got != want {
			t.Errorf("manifestPath(%q) = %q, want %q", in, got, want)
		}
	}
}
