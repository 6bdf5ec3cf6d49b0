package validate

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/apiresources"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
)

// relatedKey is what an `as` may be: a JSON key a reconciler reads without quoting.
var relatedKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// related checks payload.related: each entry's shape, its type against the built-in API
// table and the Katalog's CRDs, its namespace, Secrets, and its templates.
func (k *checker) related(r *katalog.Remote) {
	seen := map[string]int{}
	for i, e := range r.Payload.Related {
		at := fmt.Sprintf("%s.payload.related[%d]", remotePath, i)
		switch {
		case e.As == "":
			k.errorAt(katalog.RuleRelatedAs, at+".as", fmt.Sprintf("related[%d] missing as", i),
				"set as to the key the objects are sent under in prepared.related, e.g. as: config")
		case !relatedKey.MatchString(e.As):
			k.errorAt(katalog.RuleRelatedEntry, at+".as", fmt.Sprintf("related[%d].as %q is not a plain key", i, e.As),
				"use letters, digits and _ (not first a digit), e.g. config or dbSecret")
		default:
			if first, ok := seen[e.As]; ok {
				k.errorAt(katalog.RuleRelatedEntry, at+".as", fmt.Sprintf("related[%d].as %q repeats related[%d]'s", i, e.As, first),
					"give each entry its own key in prepared.related")
			} else {
				seen[e.As] = i
			}
		}
		if (e.Kind == "") == (e.Plural == "") {
			k.errorAt(katalog.RuleRelatedEntry, at, fmt.Sprintf("related[%d] sets %s of kind and plural", i, noneOrBoth(e.Kind, e.Plural)),
				"name the type once: kind: ConfigMap, or plural: configmaps")
		}
		if (e.Name == "") == (e.Selector == nil) {
			k.errorAt(katalog.RuleRelatedEntry, at, fmt.Sprintf("related[%d] sets %s of name and selector", i, noneOrBoth(e.Name, selectorText(e.Selector))),
				`find the objects one way: name: "{{ .spec.configName }}", or selector: {matchLabels: {app: "{{ .metadata.name }}"}}`)
		}
		k.excludes(at+".exclude", e.Exclude)
		k.relatedTemplates(at, e)
		res, known := k.relatedType(at, i, e)
		if !known {
			continue
		}
		k.relatedScope(at, i, e, res)
		if res.Group == "" && res.Plural == "secrets" {
			k.relatedSecret(at, i, e, r.Endpoint)
		}
	}
}

func noneOrBoth(a, b string) string {
	if a == "" && b == "" {
		return "neither"
	}
	return "both"
}

func selectorText(s *katalog.RelatedSelector) string {
	if s == nil {
		return ""
	}
	return "selector"
}

// relatedTemplates checks the templates of name, namespace and the selector's values, and
// that their literal text could make a valid name: "{{ .metadata.name }}_cfg" never can.
func (k *checker) relatedTemplates(at string, e katalog.Related) {
	check := func(path, what, v string, valid func(string) []string, hint string) {
		if v == "" {
			return
		}
		k.template(path, v)
		if _, err := render.Parse(path, v); render.IsTemplate(v) && err != nil {
			return // template-syntax says what is wrong
		}
		probe := templateActions.ReplaceAllString(v, "x")
		if errs := valid(probe); len(errs) > 0 {
			msg := fmt.Sprintf("%s %q is not a valid %s: %s", what, v, what, strings.Join(errs, "; "))
			if render.IsTemplate(v) {
				msg = fmt.Sprintf("%s %q can never render a valid %s: its literal text breaks the rule (%s)", what, v, what, strings.Join(errs, "; "))
			}
			k.errorAt(katalog.RuleRelatedName, path, msg, hint)
		}
	}
	check(at+".name", "name", e.Name, validation.IsDNS1123Subdomain, nameHint)
	check(at+".namespace", "namespace", e.Namespace, validation.IsDNS1123Label, nameHint)
	if e.Selector != nil {
		for _, key := range slices.Sorted(maps.Keys(e.Selector.MatchLabels)) {
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				k.errorAt(katalog.RuleRelatedName, at+".selector.matchLabels."+key, fmt.Sprintf("label key %q is not valid: %s", key, strings.Join(errs, "; ")),
					"label keys are an optional DNS prefix and a name: app, app.kubernetes.io/name")
			}
			check(at+".selector.matchLabels."+key, "label value", e.Selector.MatchLabels[key], validation.IsValidLabelValue,
				"label values are at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit")
		}
	}
}

// templateActions are the {{ }} actions of a template, replaced by a valid letter to see
// whether the literal text around them could ever make a valid name.
var templateActions = regexp.MustCompile(`\{\{.*?\}\}`)

// relatedType resolves an entry's group and kind or plural against the built-in table and
// the Katalog's CRDs. known is false when the type cannot be judged (an unknown group: a
// warning) or is wrong (an error).
func (k *checker) relatedType(at string, i int, e katalog.Related) (apiresources.Resource, bool) {
	if (e.Kind == "") == (e.Plural == "") {
		return apiresources.Resource{}, false
	}
	release := k.api.builtin.Release()
	what, field := e.Plural, ".plural"
	if e.Kind != "" {
		what, field = e.Kind, ".kind"
	}
	match := func(r apiresources.Resource) bool {
		return r.Group == e.Group && (e.Kind != "" && r.Kind == e.Kind || e.Plural != "" && r.Plural == e.Plural)
	}
	if i := slices.IndexFunc(k.api.declared, match); i >= 0 {
		return k.api.declared[i], k.api.declared[i].Kind != "" || e.Kind == ""
	}
	if r, ok := lookupRelated(k.api.builtin, e); ok {
		if e.Version != "" && !slices.Contains(r.Versions, e.Version) {
			k.errorAt(katalog.RuleRelatedType, at+".version", fmt.Sprintf("related[%d]: version %s of %s %s is not served by %s", i, e.Version, groupName(e.Group), what, release),
				fmt.Sprintf("served versions: %s; or leave version out for the preferred one", strings.Join(r.Versions, ", ")))
		}
		return r, true
	}
	if k.api.builtin.HasGroup(e.Group) {
		names := k.api.builtin.Plurals(e.Group)
		if e.Kind != "" {
			names = k.api.builtin.Kinds(e.Group)
		}
		k.errorAt(katalog.RuleRelatedType, at+field, fmt.Sprintf("related[%d]: %s has no %s %q in %s", i, groupName(e.Group), field[1:], what, release),
			fmt.Sprintf("the %ss of %s: %s", field[1:], groupName(e.Group), strings.Join(names, ", ")))
		return apiresources.Resource{}, false
	}
	if !k.api.declares(e.Group, "") {
		k.warnAt(katalog.RuleUnknownAPIGroup, at+".group", fmt.Sprintf("related[%d]: group %q is neither an API group of %s nor declared by a CRD of the -f files", i, e.Group, release),
			"ork run needs the cluster to serve it: if a CRD installed apart from this Katalog does, pass ork validate --api-resources FILE (the output of kubectl api-resources -o wide)")
	}
	return apiresources.Resource{}, false
}

func lookupRelated(t *apiresources.Table, e katalog.Related) (apiresources.Resource, bool) {
	if e.Kind != "" {
		return t.LookupKind(e.Group, e.Kind)
	}
	return t.Lookup(e.Group, e.Plural)
}

// crNamespace is the template that renders the custom resource's own namespace.
var crNamespace = regexp.MustCompile(`^\{\{-?\s*\.metadata\.namespace\s*-?\}\}$`)

// relatedScope checks the namespace against the kind's scope and the custom resource's.
func (k *checker) relatedScope(at string, i int, e katalog.Related, r apiresources.Resource) {
	switch {
	case !r.Namespaced && e.Namespace != "":
		k.errorAt(katalog.RuleRelatedNamespace, at+".namespace", fmt.Sprintf("related[%d]: %s is cluster-scoped: it takes no namespace", i, r.Kind),
			"remove namespace")
	case r.Namespaced && !k.crd.IsNamespaced() && e.Namespace == "":
		k.errorAt(katalog.RuleRelatedNamespace, at+".namespace", fmt.Sprintf("related[%d]: %s is namespaced and the custom resource is not: name the namespace", i, r.Kind),
			`set namespace, e.g. namespace: "{{ .spec.namespace }}"`)
	case r.Namespaced && k.crd.IsNamespaced() && e.Namespace != "" && !crNamespace.MatchString(e.Namespace) && !e.AllowCrossNamespace:
		k.errorAt(katalog.RuleRelatedNamespace, at+".namespace", fmt.Sprintf("related[%d]: namespace %q may differ from the custom resource's, and allowCrossNamespace is false", i, e.Namespace),
			"leave namespace out for the custom resource's own; set allowCrossNamespace: true only where a custom resource may read another namespace's objects (one tenant could read another's)")
	}
}

// relatedSecret refuses Secrets without allowSecrets, and their data over plain http to
// another host than loopback or an in-cluster Service (tokenOverHTTP's rule).
func (k *checker) relatedSecret(at string, i int, e katalog.Related, endpoint string) {
	if !e.AllowSecrets {
		k.errorAt(katalog.RuleRelatedSecret, at, fmt.Sprintf("related[%d] reads Secrets without allowSecrets", i),
			"set allowSecrets: true to send the Secret's data to the endpoint (ork then needs to read it: rbac gen grants get by name)")
		return
	}
	if render.IsTemplate(endpoint) {
		return
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" {
		return
	}
	if h := u.Hostname(); h == "localhost" || net.ParseIP(h).IsLoopback() || inClusterService(h) {
		return
	}
	k.errorAt(katalog.RuleRelatedSecret, at+".allowSecrets", fmt.Sprintf("related[%d] would send Secret data in clear text to %s over plain http", i, u.Host),
		"serve the reconciler over https, or in the cluster through its Service, NAME.NAMESPACE.svc")
}
