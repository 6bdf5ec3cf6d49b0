package katalog

import (
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// readCRDFile loads c.CRDFile, fills APITypes and Namespaced from it where the Katalog is
// silent, and reports where the two disagree.
func readCRDFile(c *CRD) []Finding {
	if c.CRDFile == "" {
		return nil
	}
	f := c.Source
	at := CRDPath(c.Name, "crdFile")
	data, err := f.ReadFile(c.CRDFile)
	if err != nil {
		return []Finding{f.Finding(RuleCRDFile, SeverityError, at,
			fmt.Sprintf("cannot read crdFile %q: %v", c.CRDFile, PathlessError(err)),
			"crdFile is relative to the Katalog file; fix the path or remove crdFile and set apiTypes")}
	}
	var m apiextensionsv1.CustomResourceDefinition
	if err := sigsyaml.Unmarshal(data, &m); err != nil {
		return []Finding{f.Finding(RuleCRDFile, SeverityError, at,
			fmt.Sprintf("crdFile %q is not valid YAML: %v", c.CRDFile, err), "")}
	}
	if m.Kind != "CustomResourceDefinition" || len(m.Spec.Versions) == 0 {
		return []Finding{f.Finding(RuleCRDFile, SeverityError, at,
			fmt.Sprintf("crdFile %q is not a CustomResourceDefinition with at least one version", c.CRDFile),
			"point crdFile at an apiextensions.k8s.io/v1 CustomResourceDefinition manifest")}
	}
	c.Manifest = &m
	inferred := APITypes{
		Group:   m.Spec.Group,
		Version: storageVersion(&m),
		Kind:    m.Spec.Names.Kind,
		Plural:  m.Spec.Names.Plural,
	}
	var findings []Finding
	if c.APITypes == nil {
		c.APITypes = &inferred
	} else {
		for _, fd := range []struct {
			name           string
			declared, file *string
		}{
			{"group", &c.APITypes.Group, &inferred.Group},
			{"version", &c.APITypes.Version, &inferred.Version},
			{"kind", &c.APITypes.Kind, &inferred.Kind},
			{"plural", &c.APITypes.Plural, &inferred.Plural},
		} {
			switch {
			case *fd.declared == "":
				*fd.declared = *fd.file
			case fd.name == "version" && servesVersion(&m, *fd.declared):
				// Any served version is a valid choice.
			case *fd.declared != *fd.file:
				findings = append(findings, f.Finding(RuleCRDFileMismatch, SeverityError, CRDPath(c.Name, "apiTypes."+fd.name),
					fmt.Sprintf("apiTypes.%s is %q but crdFile %q says %q", fd.name, *fd.declared, c.CRDFile, *fd.file),
					"make them agree, or drop apiTypes and let ork infer it from crdFile"))
			}
		}
	}
	namespaced := m.Spec.Scope != apiextensionsv1.ClusterScoped
	if c.Namespaced == nil {
		c.Namespaced = &namespaced
	} else if *c.Namespaced != namespaced {
		findings = append(findings, f.Finding(RuleCRDFileMismatch, SeverityError, CRDPath(c.Name, "namespaced"),
			fmt.Sprintf("namespaced is %v but crdFile %q has scope %s", *c.Namespaced, c.CRDFile, m.Spec.Scope),
			"make them agree, or drop namespaced and let ork infer it from crdFile"))
	}
	return findings
}

func storageVersion(m *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range m.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return m.Spec.Versions[0].Name
}

func servesVersion(m *apiextensionsv1.CustomResourceDefinition, name string) bool {
	for _, v := range m.Spec.Versions {
		if v.Name == name && v.Served {
			return true
		}
	}
	return false
}

// PathlessError drops the path from an *fs.PathError, for messages that already name the file.
func PathlessError(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// Schema returns the OpenAPI schema of the CRD's version in use, or nil when unknown.
func (c *CRD) Schema() *apiextensionsv1.JSONSchemaProps {
	if c.Manifest == nil || c.APITypes == nil {
		return nil
	}
	for _, v := range c.Manifest.Spec.Versions {
		if v.Name == c.APITypes.Version && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	return nil
}
