// Package crschema judges a custom resource against its CRD's openAPIV3Schema with the
// apiserver's own code (k8s.io/apiextensions-apiserver), in the apiserver's order for a
// create with fieldValidation=Strict: unknown fields, defaults, then the schema's
// validation and the object's name. x-kubernetes-validations (CEL) rules are not evaluated.
package crschema

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
)

// Problem is one way a custom resource breaks its CRD's schema.
type Problem struct {
	// Field is the offending field's path: "spec.replicas", "spec.ports[0].port".
	Field string
	// Message says what is wrong, in the apiserver's words.
	Message string
}

// Validator checks custom resources of one version of a CRD.
type Validator struct {
	structural *structuralschema.Structural
	schema     validation.SchemaCreateValidator
}

// New builds the validator of a version's schema, as the apiserver does for its CRD.
func New(s *apiextensionsv1.JSONSchemaProps) (*Validator, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, internal, nil); err != nil {
		return nil, fmt.Errorf("convert the schema: %w", err)
	}
	st, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	v, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema: %w", err)
	}
	return &Validator{structural: st, schema: v}, nil
}

// Validate returns every problem of obj (a custom resource as decoded from JSON); obj is not
// changed.
func (v *Validator) Validate(obj map[string]any) []Problem {
	u := runtime.DeepCopyJSON(obj)
	var out []Problem
	// Strict field validation rejects what the apiserver would otherwise prune.
	pruned := pruning.PruneWithOptions(u, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range pruned {
		out = append(out, Problem{Field: p, Message: fmt.Sprintf("unknown field %q", p)}) // the apiserver's words
	}
	defaulting.Default(u, v.structural)
	for _, e := range validation.ValidateCustomResource(nil, u, v.schema) {
		out = append(out, Problem{Field: e.Field, Message: e.ErrorBody()})
	}
	md, _ := u["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if name == "" {
		out = append(out, Problem{Field: "metadata.name", Message: "Required value: name is required"})
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
		if name != "" {
			out = append(out, Problem{Field: "metadata.name", Message: fmt.Sprintf("Invalid value: %q: %s", name, msg)})
		}
	}
	return out
}
