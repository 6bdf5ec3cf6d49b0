package validate

import (
	"fmt"
	"strings"
	"time"

	"github.com/orkspace/ork/internal/katalog"
)

// checkFile checks what belongs to a whole Katalog file: its apiVersion, kind and CRD list.
func checkFile(f *katalog.File) []katalog.Finding {
	var out []katalog.Finding
	k := f.Katalog
	apiHint := fmt.Sprintf("set apiVersion: %s", katalog.APIVersion)
	switch k.APIVersion {
	case katalog.APIVersion, katalog.LegacyAPIVersion:
	case "":
		out = append(out, f.Finding(katalog.RuleAPIVersion, katalog.SeverityError, "apiVersion", "apiVersion is missing", apiHint))
	default:
		out = append(out, f.Finding(katalog.RuleAPIVersion, katalog.SeverityError, "apiVersion",
			fmt.Sprintf("apiVersion %q is not a Katalog apiVersion", k.APIVersion),
			fmt.Sprintf("%s (or the legacy %s)", apiHint, katalog.LegacyAPIVersion)))
	}
	switch k.Kind {
	case katalog.Kind:
	case "":
		out = append(out, f.Finding(katalog.RuleKind, katalog.SeverityError, "kind", "kind is missing", "set kind: Katalog"))
	default:
		out = append(out, f.Finding(katalog.RuleKind, katalog.SeverityError, "kind",
			fmt.Sprintf("kind %q is not Katalog", k.Kind), "set kind: Katalog"))
	}
	if len(k.Spec.CRDs) == 0 {
		out = append(out, f.Finding(katalog.RuleNoCRDs, katalog.SeverityError, "spec.crds", "no CRDs declared under spec.crds",
			"declare at least one CRD, e.g. spec.crds.webapp with apiTypes or crdFile"))
	}
	return out
}

// apiTypes checks that the CRD is identified: apiTypes (declared or inferred from crdFile)
// with a group, version, kind and plural.
func (k *checker) apiTypes() {
	c := k.crd
	if c.CRDFile != "" && c.Manifest == nil {
		return // the loader reported why crdFile is unusable; missing fields would only echo it
	}
	if c.APITypes == nil {
		k.errorAt(katalog.RuleAPITypes, "apiTypes", fmt.Sprintf("CRD %q has neither apiTypes nor crdFile", c.Name),
			"set apiTypes: {group, version, kind, plural}, or crdFile: the path of the CRD manifest")
		return
	}
	for _, f := range []struct{ name, value, example string }{
		{"group", c.APITypes.Group, "myorg.io"},
		{"version", c.APITypes.Version, "v1"},
		{"kind", c.APITypes.Kind, "WebApp"},
		{"plural", c.APITypes.Plural, "webapps"},
	} {
		if f.value == "" {
			k.errorAt(katalog.RuleAPITypes, "apiTypes."+f.name, "apiTypes missing "+f.name,
				fmt.Sprintf("set apiTypes.%s, e.g. %s", f.name, f.example))
		}
	}
	if p := c.APITypes.Plural; p != strings.ToLower(p) {
		k.errorAt(katalog.RuleLowercasePlural, "apiTypes.plural", fmt.Sprintf("apiTypes.plural %q is not lowercase", p),
			fmt.Sprintf("resource names are lowercase: use %q", strings.ToLower(p)))
	}
}

// crFiles checks that every sample CR file exists.
func (k *checker) crFiles() {
	for i, p := range k.crd.CRFiles {
		if _, err := k.crd.Source.Stat(p); err != nil {
			k.errorAt(katalog.RuleCRFile, fmt.Sprintf("crFiles[%d]", i), fmt.Sprintf("cannot read crFile %q: %v", p, katalog.PathlessError(err)),
				"crFiles are relative to the Katalog file")
		}
	}
}

// reconcile checks the reconciler's tuning and that something reconciles the CRD at all.
func (k *checker) reconcile() {
	r := k.crd.OperatorBox.Reconcile
	if r.Workers != nil && (*r.Workers < 1 || *r.Workers > 64) {
		k.errorAt(katalog.RuleWorkers, "operatorBox.reconcile.workers", fmt.Sprintf("workers is %d, want 1..64", *r.Workers),
			"set workers between 1 and 64, or omit it for the default of 4")
	}
	if r.Resync != "" {
		if msg := checkDuration("resync", r.Resync); msg != "" {
			k.errorAt(katalog.RuleDuration, "operatorBox.reconcile.resync", msg,
				"use a Go duration such as 10m or 1h, or omit resync to turn periodic reconciles off")
		}
	}
	if r.Remote == nil && !r.DefaultEnabled() {
		k.warnAt(katalog.RuleNothingReconciles, "operatorBox.reconcile.default",
			fmt.Sprintf("CRD %q has reconcile.default: false and no reconcile.remote: nothing reconciles it", k.crd.Name),
			"set reconcile.default: true to use onCreate/onReconcile/onDelete, or add reconcile.remote")
	}
}

// checkDuration returns why s is not a positive Go duration, or "".
func checkDuration(field, s string) string {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return fmt.Sprintf("%s %q is not a duration", field, s)
	case d <= 0:
		return fmt.Sprintf("%s %q is not positive", field, s)
	}
	return ""
}
