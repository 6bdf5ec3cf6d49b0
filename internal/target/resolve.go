// Package target builds the clients of the clusters a Katalog's children go to besides the
// one ork runs in (spokes): it renders a custom resource's target, reads the kubeconfig from
// its Secret, keeps one client set per target (rebuilt when the Secret changes), and tracks
// whether each target answers. It starts nothing itself: the engine calls it.
package target

import (
	"fmt"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
)

// Condition reasons of a custom resource whose target is in the way (Ready=False).
const (
	// ReasonTargetUnreachable: the target's apiserver does not answer, or its kubeconfig
	// cannot be read or used.
	ReasonTargetUnreachable = "TargetUnreachable"
	// ReasonTargetNamespaceMissing: the custom resource's namespace does not exist on the
	// target; ork creates no namespaces there.
	ReasonTargetNamespaceMissing = "TargetNamespaceMissing"
)

// StatusField is the key under a custom resource's status where ork records the targets
// that may hold its children, each as its Ref's String: a target change, or a delete, finds
// them there after a restart.
const StatusField = "childTargets"

// Ref is a rendered target: the Secret key holding a kubeconfig. The zero Ref is the local
// cluster.
type Ref struct {
	Namespace string
	Name      string
	Key       string
}

// Local reports whether r is the cluster ork runs in.
func (r Ref) Local() bool { return r.Name == "" }

// String names the target in logs, conditions and traces: namespace/name[key], or "local".
// It holds no credential.
func (r Ref) String() string {
	if r.Local() {
		return "local"
	}
	return fmt.Sprintf("%s/%s[%s]", r.Namespace, r.Name, r.Key)
}

// ParseRef reads a Ref back from its String form, namespace/name[key]: how ork names the
// targets holding a custom resource's children in its status (docs/multicluster.md). "local"
// is no target: an error, as is anything that is not a valid Secret reference.
func ParseRef(s string) (Ref, error) {
	ns, rest, ok := strings.Cut(s, "/")
	name, key, ok2 := strings.Cut(rest, "[")
	key, ok3 := strings.CutSuffix(key, "]")
	if !ok || !ok2 || !ok3 || key == "" {
		return Ref{}, fmt.Errorf("target %q is not namespace/name[key]", s)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return Ref{}, fmt.Errorf("target %q: namespace: %s", s, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return Ref{}, fmt.Errorf("target %q: name: %s", s, strings.Join(errs, "; "))
	}
	if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
		return Ref{}, fmt.Errorf("target %q: key: %s", s, strings.Join(errs, "; "))
	}
	return Ref{Namespace: ns, Name: name, Key: key}, nil
}

// Template is a katalog.Target with its templates parsed once, for every custom resource
// of the CRD.
type Template struct {
	name, namespace *template.Template
	rawName, rawNS  string
	key             string
	defaultNS       string
}

// Compile parses t; at locates it in errors (its Katalog path), defaultNamespace is ork's
// namespace, where the Secret is unless the reference names another. A nil t (the local
// cluster) gives a nil Template, whose Resolve gives the local Ref.
func Compile(at string, t *katalog.Target, defaultNamespace string) (*Template, error) {
	if t == nil {
		return nil, nil
	}
	ref := t.KubeconfigSecretRef
	if ref == nil {
		return nil, fmt.Errorf("%s: kubeconfigSecretRef is required", at)
	}
	at += ".kubeconfigSecretRef"
	if ref.Name == "" {
		return nil, fmt.Errorf("%s.name is required", at)
	}
	if ref.Key == "" {
		return nil, fmt.Errorf("%s.key is required", at)
	}
	tm := &Template{rawName: ref.Name, rawNS: ref.Namespace, key: ref.Key, defaultNS: defaultNamespace}
	var err error
	if tm.name, err = parse(at+".name", ref.Name); err != nil {
		return nil, err
	}
	if tm.namespace, err = parse(at+".namespace", ref.Namespace); err != nil {
		return nil, err
	}
	return tm, nil
}

// parse parses a template with render's function set and strict missing keys, as a templated
// secretRef is: a typo in the field name must fail, not put the children in the local
// cluster. Text without actions stays literal (nil).
func parse(at, text string) (*template.Template, error) {
	if !render.IsTemplate(text) {
		return nil, nil
	}
	t, err := render.Parse(at, text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	return t, nil
}

// Resolve renders t against the custom resource cr (as a map, the way templates see it).
// A name that renders empty (or only spaces) is the local cluster; a name or namespace that
// renders to no valid Kubernetes name is an error naming what it rendered.
func Resolve(t *Template, cr map[string]any) (Ref, error) {
	if t == nil {
		return Ref{}, nil
	}
	name, err := execute(t.name, t.rawName, cr)
	if err != nil {
		return Ref{}, fmt.Errorf("render target secret name: %w", err)
	}
	if name = strings.TrimSpace(name); name == "" {
		return Ref{}, nil
	}
	ns, err := execute(t.namespace, t.rawNS, cr)
	if err != nil {
		return Ref{}, fmt.Errorf("render target secret namespace: %w", err)
	}
	if ns = strings.TrimSpace(ns); ns == "" {
		ns = t.defaultNS
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return Ref{}, fmt.Errorf("target secret name %q: %s", name, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return Ref{}, fmt.Errorf("target secret namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	return Ref{Namespace: ns, Name: name, Key: t.key}, nil
}

func execute(t *template.Template, raw string, cr map[string]any) (string, error) {
	if t == nil {
		return raw, nil
	}
	return render.Execute(t, cr)
}
