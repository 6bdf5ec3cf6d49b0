package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/orkspace/ork/internal/crschema"
	"github.com/orkspace/ork/internal/katalog"
)

// crSchemas judges every sample custom resource in crFiles against its CRD's schema from
// crdFile, as the apiserver would on create, each finding at the CR file's own line: a
// sample CR the apiserver refuses cannot be applied, and what ork simulates from it is
// nothing a cluster would run. The samples it accepts are kept for sampleTemplates; without
// a crdFile (apiTypes only) there is no schema to judge by, and every sample is kept as written.
func (k *checker) crSchemas() {
	c := k.crd
	if c.APITypes == nil {
		return // the kind is unknown: no sample to pick out
	}
	rulesSound := k.crdRules()
	validators := map[string]*crschema.Validator{}
	for i, p := range c.CRFiles {
		path := c.Source.Resolve(p)
		data, err := c.Source.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // a missing file is the cr-file rule's
		}
		var docs []crschema.Doc
		if err == nil {
			docs, err = crschema.Parse(path, data)
		} else {
			err = fmt.Errorf("%s: %w", path, katalog.PathlessError(err)) // a directory, say
		}
		if err != nil {
			k.errorAt(katalog.RuleCRFile, fmt.Sprintf("crFiles[%d]", i), fmt.Sprintf("cannot read crFile %q: %v", p, err), "a crFiles entry is a YAML manifest of custom resources")
			continue
		}
		for _, d := range docs {
			apiVersion, _ := d.Object["apiVersion"].(string)
			kind, _ := d.Object["kind"].(string)
			group, version, _ := strings.Cut(apiVersion, "/")
			if group != c.APITypes.Group || kind != c.APITypes.Kind {
				continue // another object of the file: a Secret, another CRD's resource
			}
			name := kind
			if md, ok := d.Object["metadata"].(map[string]any); ok {
				if n, ok := md["name"].(string); ok {
					name = kind + " " + n
				}
			}
			if c.Manifest == nil {
				k.addSample(fmt.Sprintf("%s (%s)", name, path), d.Object) // as ork simulate takes it
				continue
			}
			v, ok := validators[version]
			if !ok {
				v, err = k.validatorFor(version)
				if err != nil {
					pos := d.Pos("apiVersion")
					k.out = append(k.out, katalog.Finding{Rule: katalog.RuleCRSchema, Severity: katalog.SeverityError, File: path,
						Line: pos.Line, Column: pos.Column, Path: "apiVersion", Message: fmt.Sprintf("%s: %v", name, err),
						Hint: fmt.Sprintf("use a version that %s serves", c.CRDFile)})
					continue
				}
				if !rulesSound {
					v = v.WithoutRules()
				}
				validators[version] = v
			}
			problems := v.Validate(d.Object)
			if len(problems) == 0 {
				k.addSample(fmt.Sprintf("%s (%s)", name, path), d.Object)
			}
			for _, pr := range problems {
				pos := d.Pos(pr.Field)
				rule, hint := katalog.RuleCRSchema, fmt.Sprintf("the apiserver refuses this custom resource (kubectl apply fails): the CRD's schema is in %s", c.CRDFile)
				if pr.Rule {
					rule, hint = katalog.RuleCRValidationRule, fmt.Sprintf("the apiserver refuses this custom resource (kubectl apply fails): the rule is an x-kubernetes-validations entry of %s", c.CRDFile)
				}
				k.out = append(k.out, katalog.Finding{Rule: rule, Severity: katalog.SeverityError, File: path,
					Line: pos.Line, Column: pos.Column, Path: pr.Field, Message: fmt.Sprintf("%s: %s", name, pr.Message), Hint: hint})
			}
		}
	}
}

// validatorFor builds the validator of a version of the CRD's manifest.
func (k *checker) validatorFor(version string) (*crschema.Validator, error) {
	for _, v := range k.crd.Manifest.Spec.Versions {
		if v.Name != version {
			continue
		}
		if !v.Served {
			return nil, fmt.Errorf("version %s of %s is not served", version, k.crd.Manifest.Name)
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("version %s of %s has no schema", version, k.crd.Manifest.Name)
		}
		return crschema.New(v.Schema.OpenAPIV3Schema)
	}
	return nil, fmt.Errorf("%s has no version %s", k.crd.Manifest.Name, version)
}
