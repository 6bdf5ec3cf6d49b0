package crschema

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
)

// RuleProblems returns what the apiserver refuses in the x-kubernetes-validations rules of a
// CRD when it is created: a rule that does not compile, an estimated cost above the limit of a
// rule or of the whole schema. Field is the path in the v1 manifest
// ("spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-validations[0].rule").
// The CRD's other problems are not this function's: crd is not changed.
func RuleProblems(crd *apiextensionsv1.CustomResourceDefinition) ([]Problem, error) {
	v1 := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, internal, nil); err != nil {
		return nil, fmt.Errorf("convert the CRD: %w", err)
	}
	// The whole CRD is validated as the apiserver does (the CEL checks need the schema's
	// other checks' context); only the rules' errors are kept. Compilation and cost
	// estimation are bounded, so no caller's context is needed.
	var out []Problem
	for _, e := range crdvalidation.ValidateCustomResourceDefinition(context.Background(), internal) {
		if !strings.Contains(e.Field, "x-kubernetes-validations") && !strings.Contains(e.Detail, "x-kubernetes-validations") {
			continue
		}
		// A compile error goes on with the rule and a caret under the offending token: the
		// first line says it, and a finding is one line.
		msg, _, _ := strings.Cut(e.Detail, "\n")
		out = append(out, Problem{Field: manifestPath(e.Field), Message: msg, Rule: true})
	}
	return out, nil
}

// propertyKey matches field.Path's key notation, "properties[spec]".
var propertyKey = regexp.MustCompile(`\[([^\]0-9][^\]]*)\]`)

// manifestPath turns a path of the internal CRD into the dot path of its v1 manifest: the
// conversion moves a schema all versions share to spec.validation, and field.Path writes a
// map key as [key].
func manifestPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "spec.validation."); ok {
		p = "spec.versions[0].schema." + rest
	}
	return propertyKey.ReplaceAllString(p, ".$1")
}
