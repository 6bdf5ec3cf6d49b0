// Package validate checks the semantics of a loaded Katalog (docs/katalog.md#rules) and
// returns every problem as a located Finding; it never prints.
package validate

import (
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/orkspace/ork/internal/katalog"
)

// Katalog runs every semantic rule over set and returns all findings, sorted. Structural
// findings from katalog.Load are not repeated here.
func Katalog(set *katalog.Set) []katalog.Finding { return KatalogWith(set, Options{}) }

// KatalogWith is Katalog with opts.
func KatalogWith(set *katalog.Set, opts Options) []katalog.Finding {
	var out []katalog.Finding
	for _, f := range set.Files {
		out = append(out, checkFile(f)...)
	}
	api := newAPITypes(set, opts)
	for _, c := range set.CRDs {
		k := &checker{crd: c, schema: c.Schema(), api: api}
		k.out = append(k.out, remoteRequiresDefaultOff(c)...)
		k.apiTypes()
		k.crFiles()
		k.crSchemas()
		k.reconcile()
		k.remote()
		k.targets()
		k.declarative()
		k.sampleTemplates()
		k.statusSubresource()
		k.statusSchema()
		k.lastDecisionStatus()
		k.childTargetsStatus()
		k.operationStatus()
		out = append(out, k.out...)
	}
	out = withoutCascades(set, out)
	katalog.SortFindings(out)
	return out
}

// withoutCascades drops the findings about a field that is absent because it was misspelt:
// the loader's unknown-field finding names it already ("did you mean `endpoint`?"), and
// "endpoint is required" beside it would send the reader after a second problem.
func withoutCascades(set *katalog.Set, fs []katalog.Finding) []katalog.Finding {
	files := map[string]*katalog.File{}
	for _, f := range set.Files {
		files[f.Path] = f
	}
	return slices.DeleteFunc(fs, func(fd katalog.Finding) bool {
		f := files[fd.File]
		return f != nil && fd.Path != "" && f.Misspelt(fd.Path)
	})
}

// checker collects the findings of one CRD; rest paths are relative to the CRD's node
// ("operatorBox.reconcile.remote.endpoint").
type checker struct {
	crd *katalog.CRD
	// schema is the CRD's OpenAPI schema from crdFile, nil when unknown.
	schema *apiextensionsv1.JSONSchemaProps
	api    apiTypes
	// samples are the custom resources of crFiles; tmpls the templates that parse.
	samples []sample
	tmpls   []tmpl
	out     []katalog.Finding
}

func (k *checker) errorAt(rule katalog.Rule, rest, msg, hint string) {
	k.add(rule, katalog.SeverityError, rest, msg, hint)
}

func (k *checker) warnAt(rule katalog.Rule, rest, msg, hint string) {
	k.add(rule, katalog.SeverityWarning, rest, msg, hint)
}

func (k *checker) add(rule katalog.Rule, sev katalog.Severity, rest, msg, hint string) {
	k.out = append(k.out, k.crd.Source.Finding(rule, sev, katalog.CRDPath(k.crd.Name, rest), msg, hint))
}

// remoteRequiresDefaultOff is the seed's rule: reconcile.remote needs reconcile.default: false,
// and an absent default counts as true.
func remoteRequiresDefaultOff(c *katalog.CRD) []katalog.Finding {
	r := c.OperatorBox.Reconcile
	if r.Remote == nil || !r.DefaultEnabled() {
		return nil
	}
	at := katalog.CRDPath(c.Name, "operatorBox.reconcile.remote")
	if r.Default != nil {
		at = katalog.CRDPath(c.Name, "operatorBox.reconcile.default")
	}
	return []katalog.Finding{c.Source.Finding(katalog.RuleRemoteRequiresDefaultOff, katalog.SeverityError, at,
		fmt.Sprintf("CRD %q: reconcile.remote requires reconcile.default: false", c.Name),
		"set `reconcile.default: false` so the built-in declarative reconciler does not also run")}
}

// statusSubresource refuses a crdFile's version without the status subresource, unless the
// CRD entry accepts it with status: false: ork run then writes no status at all (every write
// to the object would bump its generation and trigger ork again), so the Ready condition
// that users and kubectl wait for never appears.
func (k *checker) statusSubresource() {
	if k.crd.Manifest == nil || k.crd.APITypes == nil || (k.crd.Status != nil && !*k.crd.Status) {
		return
	}
	for _, v := range k.crd.Manifest.Spec.Versions {
		if v.Name == k.crd.APITypes.Version && (v.Subresources == nil || v.Subresources.Status == nil) {
			k.errorAt(katalog.RuleStatusSubresource, "crdFile", fmt.Sprintf("version %s of %s has no status subresource: ork run would write no status (no Ready condition, no observedGeneration) for its custom resources, and kubectl wait --for=condition=Ready never ends",
				v.Name, k.crd.Manifest.Name), "add `subresources: {status: {}}` to the version in the CRD, or set `status: false` on the CRD entry to run without status")
		}
	}
}
