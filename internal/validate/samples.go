package validate

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/render"
)

// sample is a custom resource of the CRD's crFiles, as the apiserver would serve it.
type sample struct {
	// name is "WebApp my-webapp (cr.yaml)".
	name string
	obj  map[string]any
}

// tmpl is a template of the CRD that parses, at its Katalog path.
type tmpl struct{ at, text string }

// sampleTemplates renders every template against every sample custom resource the
// apiserver would accept, and says in words when one reads a field the sample lacks: outside
// remote.args that fails the reconcile (simulate stops there); inside it renders as null,
// by design. A warning: a real custom resource may have the field.
func (k *checker) sampleTemplates() {
	for _, s := range k.samples {
		for _, t := range k.tmpls {
			if strings.HasPrefix(t.at, remotePath+".args") {
				continue // there a missing field renders as null, by design (docs/katalog.md#templates)
			}
			_, err := render.String(t.at, t.text, s.obj)
			var mf *render.MissingField
			if !errors.As(err, &mf) {
				continue // rendered, or failed otherwise (a required, a type): the reconcile says so
			}
			parent, key := splitPath(mf.Path)
			k.warnAt(katalog.RuleTemplateSampleField, t.at,
				fmt.Sprintf("template reads %s, which the sample %s lacks: its reconcile would fail", mf.Path, s.name),
				fmt.Sprintf("read an optional field with {{ index %s %q | default \"…\" }}, or add it to the sample", parent, key))
		}
	}
}

// splitPath splits ".spec.level" into ".spec" and "level" ("." and "x" for ".x").
func splitPath(p string) (string, string) {
	i := strings.LastIndex(p, ".")
	if i <= 0 {
		return ".", p[i+1:]
	}
	return p[:i], p[i+1:]
}

// addSample records a sample custom resource of the CRD for sampleTemplates.
func (k *checker) addSample(name string, obj map[string]any) {
	served := manifest.AsServed(&unstructured.Unstructured{Object: obj}, k.crd.IsNamespaced())
	k.samples = append(k.samples, sample{name: name, obj: served.Object})
}
