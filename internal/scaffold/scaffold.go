// Package scaffold writes the starting point of a new operator for `ork init`: a Katalog,
// its CRD, a sample custom resource and a README, and for a remote reconciler one built on
// ork's reconciler SDK (Go, Python or TypeScript, the SDK vendored in) and on the types of
// the scaffold's own CRD, with its own test, its Dockerfile and the manifests that run it in
// a cluster (deploy/reconciler.yaml).
package scaffold

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/katalogschema"
)

// Remote is the flavour of remote reconciler to write.
type Remote string

// Remote reconciler flavours.
const (
	RemoteNone   Remote = "none"
	RemoteGo     Remote = "go"
	RemotePython Remote = "python"
	RemoteTS     Remote = "ts"
)

// Options says what to write.
type Options struct {
	// Kind is the custom resource's kind, CamelCase; default WebApp.
	Kind string
	// Group is the custom resource's API group, a DNS name with a dot; default example.com.
	Group string
	// Name is the CRD's name in the Katalog, a DNS label; default the kind in lower case.
	Name string
	// Remote is the reconciler to write; default none (the declarative reconciler).
	Remote Remote
	// Namespace is where the remote reconciler and its token Secret go; default default.
	Namespace string
}

// Defaults of Options.
const (
	DefaultKind      = "WebApp"
	DefaultGroup     = "example.com"
	DefaultNamespace = "default"
)

// Port is the remote reconciler's port, in the container and on its Service.
const Port = 8088

// File is one file to write, at Path (slash-separated) below the target directory.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode
	// Section: Data goes into an existing file between SectionStart and SectionEnd (appended
	// when the file has none), so that `ork init` in a directory with a README extends it.
	Section bool
}

//go:embed templates/*.tmpl
var templates embed.FS

var kindPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// Complete fills the defaults in.
func (o Options) Complete() Options {
	if o.Kind == "" {
		o.Kind = DefaultKind
	}
	if o.Group == "" {
		o.Group = DefaultGroup
	}
	if o.Name == "" {
		o.Name = strings.ToLower(o.Kind)
	}
	if o.Remote == "" {
		o.Remote = RemoteNone
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	return o
}

// Validate says which option Kubernetes or ork would refuse, naming the flag's field.
func (o Options) Validate() error {
	switch {
	case !kindPattern.MatchString(o.Kind):
		return fmt.Errorf("kind %q: want CamelCase letters and digits starting with a capital, e.g. WebApp", o.Kind)
	case !strings.Contains(o.Group, ".") || len(validation.IsDNS1123Subdomain(o.Group)) > 0:
		return fmt.Errorf("group %q: want a lowercase DNS name with a dot, e.g. example.com (a CRD's group needs one)", o.Group)
	case len(validation.IsDNS1123Label(o.Name)) > 0:
		return fmt.Errorf("name %q: want lowercase letters, digits and '-', e.g. webapp", o.Name)
	case len(validation.IsDNS1123Label(plural(o.Kind))) > 0:
		return fmt.Errorf("kind %q: its plural %q is no valid resource name (at most 63 characters)", o.Kind, plural(o.Kind))
	case len(validation.IsDNS1123Label(o.Namespace)) > 0:
		return fmt.Errorf("namespace %q: want lowercase letters, digits and '-', e.g. default", o.Namespace)
	case o.Remote != RemoteNone && len(validation.IsDNS1035Label(appName(o.Name))) > 0:
		return fmt.Errorf("name %q: the reconciler's Service would be %q, which is no DNS-1035 label "+
			"(a letter first, at most 63 characters)", o.Name, appName(o.Name))
	}
	switch o.Remote {
	case RemoteNone, RemoteGo, RemotePython, RemoteTS:
		return nil
	}
	return fmt.Errorf("remote %q: want go, python, ts or none", o.Remote)
}

// data is what the templates see.
type data struct {
	Kind, Group, Name, Plural, Singular, SecretName, SchemaURL string
	// Remote is "" for the declarative reconciler, else go, python or ts.
	Remote string
	// Operator is the Katalog's metadata.name; AppName the reconciler's Deployment and
	// Service, Operator-reconciler; Namespace theirs and the token Secret's.
	Operator, AppName, Namespace string
	// Endpoint is the Katalog's endpoint: the reconciler's Service in the cluster.
	Endpoint string
	Port     int
	// TSDevDependencies are the lines of package.json's devDependencies: the compiler and
	// node types the TypeScript SDK's lock file pins.
	TSDevDependencies string
}

// operatorName is the Katalog's metadata.name for the CRD named name.
func operatorName(name string) string { return name + "-operator" }

// appName is the reconciler's Deployment and Service: the Katalog's metadata.name plus
// -reconciler.
func appName(name string) string { return operatorName(name) + "-reconciler" }

// Files renders the files for o (completed and valid), in the order they should be listed.
func Files(o Options) ([]File, error) {
	d := data{Kind: o.Kind, Group: o.Group, Name: o.Name, Plural: plural(o.Kind),
		Singular: strings.ToLower(o.Kind), SecretName: o.Name + "-reconciler-token", SchemaURL: katalogschema.ID,
		Operator: operatorName(o.Name), AppName: appName(o.Name), Namespace: o.Namespace, Port: Port}
	d.Endpoint = fmt.Sprintf("http://%s.%s.svc:%d/reconcile", d.AppName, d.Namespace, Port)
	if o.Remote != RemoteNone {
		d.Remote = string(o.Remote)
	}
	type entry struct {
		path, tmpl string
		mode       fs.FileMode
	}
	entries := []entry{{"katalog.yaml", "katalog.yaml", 0o644}, {"crd.yaml", "crd.yaml", 0o644}, {"cr.yaml", "cr.yaml", 0o644}}
	switch o.Remote {
	case RemoteGo:
		entries = append(entries, entry{"secret.yaml", "secret.yaml", 0o644},
			entry{"reconciler/go.mod", "go.mod", 0o644},
			entry{"reconciler/main.go", "main.go", 0o644},
			entry{"reconciler/reconcile.go", "reconcile.go", 0o644},
			entry{"reconciler/main_test.go", "main_test.go", 0o644},
			entry{"reconciler/Dockerfile", "Dockerfile.go", 0o644},
			entry{"deploy/reconciler.yaml", "reconciler.yaml", 0o644})
	case RemotePython:
		entries = append(entries, entry{"secret.yaml", "secret.yaml", 0o644},
			entry{"reconciler/reconciler.py", "reconciler.py", 0o755},
			entry{"reconciler/test_reconciler.py", "test_reconciler.py", 0o644},
			entry{"reconciler/Dockerfile", "Dockerfile.python", 0o644},
			entry{"deploy/reconciler.yaml", "reconciler.yaml", 0o644})
	case RemoteTS:
		deps, err := tsDevDependencies()
		if err != nil {
			return nil, err
		}
		d.TSDevDependencies = deps
		entries = append(entries, entry{"secret.yaml", "secret.yaml", 0o644},
			entry{"reconciler/package.json", "package.json", 0o644},
			entry{"reconciler/tsconfig.json", "tsconfig.json", 0o644},
			entry{"reconciler/reconciler.ts", "reconciler.ts", 0o644},
			entry{"reconciler/reconciler.test.ts", "reconciler.test.ts", 0o644},
			entry{"reconciler/Dockerfile", "Dockerfile.ts", 0o644},
			entry{"deploy/reconciler.yaml", "reconciler.yaml", 0o644})
	}
	entries = append(entries, entry{"README.md", "README.md", 0o644})
	files := make([]File, 0, len(entries))
	for _, e := range entries {
		b, err := render(e.tmpl, d)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: e.path, Data: b, Mode: e.mode, Section: e.path == "README.md"})
	}
	if o.Remote == RemoteNone {
		return files, nil
	}
	sdkFiles, err := reconcilerFiles(o.Remote, files)
	if err != nil {
		return nil, err
	}
	// Before the README, which stays last.
	return append(append(files[:len(files)-1:len(files)-1], sdkFiles...), files[len(files)-1]), nil
}

// render executes templates/NAME.tmpl; its delimiters are [[ ]], since a Katalog's own
// templates use {{ }}.
func render(name string, d data) ([]byte, error) {
	t, err := template.New(name+".tmpl").Delims("[[", "]]").Option("missingkey=error").
		Funcs(template.FuncMap{"snake": func(s string) string { return strings.ReplaceAll(s, "-", "_") }}).
		ParseFS(templates, "templates/"+name+".tmpl")
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("template %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// plural is the kind's resource name: lower case, plus s (es after s, x, z, ch, sh; ies for
// a consonant and y). English has exceptions; crd.yaml and the Katalog can be edited.
func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "z"),
		strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case len(k) > 1 && strings.HasSuffix(k, "y") && !strings.ContainsAny(k[len(k)-2:len(k)-1], "aeiou"):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}
