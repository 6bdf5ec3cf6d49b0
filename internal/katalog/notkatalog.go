package katalog

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// notAKatalog recognises another Kubernetes manifest given with -f (a CRD, a custom
// resource, a Deployment): its kind is set and is not Katalog, and its apiVersion is no
// Katalog's. One finding says what the file is and what -f expects, instead of one per
// field that a Katalog lacks or does not know.
func notAKatalog(f *File, doc *yaml.Node) (Finding, bool) {
	if doc.Kind != yaml.MappingNode {
		return Finding{}, false
	}
	var kind, apiVersion *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		switch k, v := doc.Content[i], doc.Content[i+1]; {
		case k.Value == "kind" && v.Kind == yaml.ScalarNode && kind == nil:
			kind = v
		case k.Value == "apiVersion" && v.Kind == yaml.ScalarNode && apiVersion == nil:
			apiVersion = v
		}
	}
	if kind == nil || kind.Value == "" || strings.EqualFold(kind.Value, Kind) {
		return Finding{}, false
	}
	av := ""
	if apiVersion != nil {
		av = apiVersion.Value
	}
	// A Katalog apiVersion with a wrong kind is a Katalog with a typo: the kind rule says so.
	if av == APIVersion || av == LegacyAPIVersion || strings.HasPrefix(av, "orkestra.") {
		return Finding{}, false
	}
	article := "a"
	if strings.ContainsAny(kind.Value[:1], "AEIOUaeiou") {
		article = "an"
	}
	what := article + " " + kind.Value
	if av != "" {
		what += " (" + av + ")"
	}
	hint := "pass a Katalog (apiVersion: " + APIVersion + ", kind: Katalog) with -f"
	group, _, versioned := strings.Cut(av, "/")
	switch {
	case kind.Value == "CustomResourceDefinition":
		what = "a CustomResourceDefinition"
		hint += "; a Katalog names this file in spec.crds.<name>.crdFile"
	case versioned && strings.Contains(group, ".") && !strings.HasSuffix(group, ".k8s.io"):
		what += " custom resource"
		hint += "; a Katalog lists a sample custom resource in spec.crds.<name>.crFiles"
	}
	return Finding{Rule: RuleNotAKatalog, Severity: SeverityError, File: f.Path, Line: kind.Line, Column: kind.Column,
		Message: "this file is " + what + ", not a Katalog", Hint: hint}, true
}
