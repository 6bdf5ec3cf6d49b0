// Package related resolves a remote CRD's payload.related entries: which objects one custom
// resource refers to (its references), and, through an Index of the references of each
// custom resource's last pass, which custom resources to pass again when an object changes.
// It talks to no cluster: internal/run reads the objects.
package related

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
)

// MaxSelected is the most objects a selector entry sends; past it the custom resource gets a
// condition saying the list was cut.
const MaxSelected = 100

// Entry is one compiled payload.related entry. Its templates are parsed once.
type Entry struct {
	// As is the key under prepared.related.
	As string
	// Namespaced is the scope of the entry's kind; the caller sets it from discovery.
	Namespaced bool
	// Secret is true for core Secrets: their data is sent only with AllowSecrets.
	Secret                                                   bool
	Required, AllowCrossNamespace, WatchStatus, AllowSecrets bool
	Exclude                                                  []dotpath.Path
	// WatchNamespaces are ork's --watch-namespace: a related object outside them is never
	// watched (nor granted), so a reference there is refused. Empty: every namespace.
	WatchNamespaces []string
	name, namespace text
	selector        map[string]text
	selectorKeys    []string
}

type text struct {
	raw string
	t   *template.Template
}

func (x text) render(data map[string]any) (string, error) {
	if x.t == nil {
		return x.raw, nil
	}
	return render.Execute(x.t, data)
}

// Compile parses the templates of r; at names the entry in errors
// ("payload.related[0]").
func Compile(at string, r katalog.Related) (*Entry, error) {
	e := &Entry{As: r.As, Required: r.Required, AllowCrossNamespace: r.AllowCrossNamespace, WatchStatus: r.WatchStatus, AllowSecrets: r.AllowSecrets}
	var err error
	if e.name, err = compile(at+".name", r.Name); err != nil {
		return nil, err
	}
	if e.namespace, err = compile(at+".namespace", r.Namespace); err != nil {
		return nil, err
	}
	if r.Selector != nil {
		e.selector = map[string]text{}
		e.selectorKeys = slices.Sorted(maps.Keys(r.Selector.MatchLabels))
		for _, k := range e.selectorKeys {
			if e.selector[k], err = compile(at+".selector.matchLabels."+k, r.Selector.MatchLabels[k]); err != nil {
				return nil, err
			}
		}
	}
	if (r.Name == "") == (r.Selector == nil) {
		return nil, fmt.Errorf("%s: set exactly one of name and selector", at)
	}
	for i, p := range r.Exclude {
		path, err := dotpath.Parse(p)
		if err != nil {
			return nil, fmt.Errorf("%s.exclude[%d]: %w", at, i, err)
		}
		e.Exclude = append(e.Exclude, path)
	}
	return e, nil
}

func compile(at, s string) (text, error) {
	if !render.IsTemplate(s) {
		return text{raw: s}, nil
	}
	t, err := render.Parse(at, s)
	if err != nil {
		return text{}, fmt.Errorf("%s: %w", at, err)
	}
	return text{raw: s, t: t}, nil
}

// ConstantName reports whether the entry names one object by a literal name: such an entry
// is watched by name (RBAC resourceNames), a templated one read at pass time.
func (e *Entry) ConstantName() bool { return e.selector == nil && e.name.t == nil }

// ConstantNamespace is the namespace the entry names outright, "" when it is templated or
// left to the custom resource's: only a constant one bounds where the entry's objects can be.
func (e *Entry) ConstantNamespace() string {
	if e.namespace.t != nil {
		return ""
	}
	return e.namespace.raw
}

// Selects reports whether the entry finds its objects by label selector.
func (e *Entry) Selects() bool { return e.selector != nil }

// Ref is what one entry resolves to for one custom resource: a name, or a selector, in a
// namespace ("" for a cluster-scoped kind).
type Ref struct {
	As        string
	Namespace string
	// Name is the object's name; "" for a selector entry.
	Name string
	// Selector is nil for a name entry.
	Selector labels.Selector
}

// Resolve renders the entry for the custom resource cr. A namespace other than the CR's
// without AllowCrossNamespace, or a name or label value that is not valid, is an error.
func (e *Entry) Resolve(cr map[string]any) (Ref, error) {
	ref := Ref{As: e.As}
	crNS := ""
	if md, ok := cr["metadata"].(map[string]any); ok {
		crNS, _ = md["namespace"].(string)
	}
	if e.Namespaced {
		ns, err := e.namespace.render(cr)
		if err != nil {
			return Ref{}, fmt.Errorf("related %s: namespace: %w", e.As, err)
		}
		if ns == "" {
			ns = crNS
		}
		if ns == "" {
			return Ref{}, fmt.Errorf("related %s: no namespace: a cluster-scoped custom resource names the namespace of a namespaced kind", e.As)
		}
		if ns != crNS && crNS != "" && !e.AllowCrossNamespace {
			return Ref{}, fmt.Errorf("related %s: namespace %q is not the custom resource's (%q) and allowCrossNamespace is false", e.As, ns, crNS)
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return Ref{}, fmt.Errorf("related %s: namespace %q: %s", e.As, ns, strings.Join(errs, "; "))
		}
		if len(e.WatchNamespaces) > 0 && !slices.Contains(e.WatchNamespaces, ns) {
			return Ref{}, fmt.Errorf("related %s: namespace %q is outside the watched namespaces %v: ork would never see its changes", e.As, ns, e.WatchNamespaces)
		}
		ref.Namespace = ns
	}
	if e.selector == nil {
		name, err := e.name.render(cr)
		if err != nil {
			return Ref{}, fmt.Errorf("related %s: name: %w", e.As, err)
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return Ref{}, fmt.Errorf("related %s: name %q: %s", e.As, name, strings.Join(errs, "; "))
		}
		ref.Name = name
		return ref, nil
	}
	set := labels.Set{}
	for _, k := range e.selectorKeys {
		v, err := e.selector[k].render(cr)
		if err != nil {
			return Ref{}, fmt.Errorf("related %s: selector %s: %w", e.As, k, err)
		}
		set[k] = v
	}
	sel, err := labels.ValidatedSelectorFromSet(set)
	if err != nil {
		return Ref{}, fmt.Errorf("related %s: selector: %w", e.As, err)
	}
	ref.Selector = sel
	return ref, nil
}

// String names the reference in messages: "configmaps ns/name" style, without the type.
func (r Ref) String() string {
	what := r.Name
	if r.Selector != nil {
		what = "selector " + r.Selector.String()
	}
	if r.Namespace != "" {
		return r.Namespace + "/" + what
	}
	return what
}
