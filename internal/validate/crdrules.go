package validate

import (
	"fmt"

	"github.com/orkspace/ork/internal/crschema"
	"github.com/orkspace/ork/internal/katalog"
)

// crdRules reports, at their line in crdFile, the x-kubernetes-validations rules the
// apiserver refuses when the CRD is created: one that does not compile, or whose estimated
// cost is above the limit. It reports whether the rules are sound: when they are not, the
// sample custom resources are judged without them (kubectl apply of the CRD fails first).
func (k *checker) crdRules() bool {
	c := k.crd
	if c.Manifest == nil {
		return true
	}
	path := c.Source.Resolve(c.CRDFile)
	problems, err := crschema.RuleProblems(c.Manifest)
	if err != nil {
		k.errorAt(katalog.RuleCRDValidationRule, "crdFile", fmt.Sprintf("cannot check the x-kubernetes-validations rules of %s: %v", c.CRDFile, err), "")
		return false
	}
	if len(problems) == 0 {
		return true
	}
	var doc crschema.Doc
	// Through the Katalog's file system, as every other read of a Katalog-relative file.
	if data, err := c.Source.ReadFile(c.CRDFile); err == nil {
		docs, _ := crschema.Parse(path, data)
		for _, d := range docs {
			if d.Object["kind"] == "CustomResourceDefinition" {
				doc = d
				break
			}
		}
	}
	for _, p := range problems {
		pos := doc.Pos(p.Field)
		k.out = append(k.out, katalog.Finding{Rule: katalog.RuleCRDValidationRule, Severity: katalog.SeverityError, File: path,
			Line: pos.Line, Column: pos.Column, Path: p.Field, Message: fmt.Sprintf("%s: %s", c.Manifest.Name, p.Message),
			Hint: "the apiserver refuses this CRD (kubectl apply fails): fix the rule; for its cost, bound what it reads with maxItems, maxProperties and maxLength"})
	}
	return false
}
