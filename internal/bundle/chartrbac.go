package bundle

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rbacgen"
)

// watchHole stands for one namespace of the watchNamespaces value in the RBAC rbacgen
// derives for it; a DNS label no real namespace is likely to have.
const watchHole = "ork-helm-watch-namespace-9a4c2d"

// rbacMode is the RBAC of one replica mode (leader election or sharding): rbacgen's output
// without watch namespaces, with one unknown watch namespace (watchHole), and with each
// namespace the install always has a Role in (ork's own, a fixed Secret's) watched too,
// where rbacgen merges the watched types into that namespace's Role.
type rbacMode struct {
	plain   []*unstructured.Unstructured
	watched []*unstructured.Unstructured            // nil when the Katalog cannot be watched per namespace
	merged  map[string][]*unstructured.Unstructured // by the fixed namespace watched
}

// rbacTemplates are the RBAC objects' templates, each exactly rbacgen's for the values:
// sharding.buckets picks the Lease rights in ork's namespace, watchNamespaces the
// ClusterRole (namespaced types granted cluster-wide or not) and a Role and RoleBinding
// per watched namespace, merged into the Role a namespace already has.
func (c chartText) rbacTemplates(set *katalog.Set, opts Options) ([]objectTemplate, error) {
	opts.ShardBuckets = 0
	leader, err := c.rbacMode(set, opts)
	if err != nil {
		return nil, err
	}
	sharded := leader
	if !hasCandidate(set) { // a rollout cannot be sharded: the Deployment's guard refuses it
		opts.ShardBuckets = shardProbe
		if sharded, err = c.rbacMode(set, opts); err != nil {
			return nil, err
		}
	}
	var out []objectTemplate
	for i, l := range leader.plain {
		if i >= len(sharded.plain) || key(sharded.plain[i]) != key(l) {
			return nil, fmt.Errorf("the RBAC of the two replica modes differs in its objects at %s", key(l))
		}
		lt, err := c.watchVariants(leader, l)
		if err != nil {
			return nil, err
		}
		st, err := c.watchVariants(sharded, sharded.plain[i])
		if err != nil {
			return nil, err
		}
		out = append(out, objectTemplate{kind: l.GetKind(), text: choose("$.Values.sharding.buckets", st, lt)})
	}
	// A Role and RoleBinding per watched namespace that has none of its own.
	for i, l := range leader.watched {
		if l.GetNamespace() != watchHole {
			continue
		}
		lt, err := c.watchedText(l)
		if err != nil {
			return nil, err
		}
		st, err := c.watchedText(sharded.watched[i])
		if err != nil {
			return nil, err
		}
		fixed := []string{"$.Release.Namespace"}
		for _, ns := range fixedNamespaces(leader.plain) {
			if ns != namespaceHole {
				fixed = append(fixed, strconv.Quote(ns))
			}
		}
		text := "{{- range $ns := " + watchList + " }}\n" +
			"{{- if not (has $ns (list " + strings.Join(fixed, " ") + ")) }}\n---\n" +
			choose("$.Values.sharding.buckets", st, lt) + "{{- end }}\n{{- end }}\n"
		out = append(out, objectTemplate{kind: l.GetKind(), text: text})
	}
	return out, nil
}

// watchList is the watchNamespaces value as ork run takes it: sorted, each once.
const watchList = "($.Values.watchNamespaces | default (list) | uniq | sortAlpha)"

// rbacMode builds the RBAC of opts' replica mode for every watch case.
func (c chartText) rbacMode(set *katalog.Set, opts Options) (rbacMode, error) {
	gen := func(watch []string) ([]*unstructured.Unstructured, error) {
		o := opts
		o.WatchNamespaces = watch
		p, _, err := build(set, o)
		if err != nil {
			return nil, err
		}
		return p.rbac, nil
	}
	var m rbacMode
	var err error
	if m.plain, err = gen(nil); err != nil {
		return m, err
	}
	if rbacgen.CheckWatchScope(set, []string{watchHole}) != nil {
		return m, nil // the Deployment's guard refuses watchNamespaces
	}
	if m.watched, err = gen([]string{watchHole}); err != nil {
		return m, err
	}
	m.merged = map[string][]*unstructured.Unstructured{}
	for _, ns := range fixedNamespaces(m.plain) {
		if m.merged[ns], err = gen([]string{ns}); err != nil {
			return m, err
		}
	}
	return m, nil
}

// fixedNamespaces are the namespaces of the Roles the install has without watch namespaces.
func fixedNamespaces(rbac []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range rbac {
		if o.GetKind() == "Role" {
			out = append(out, o.GetNamespace())
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// watchVariants is o's template in one replica mode: the object as rbacgen gives it when
// its namespace is watched, when other namespaces are, and when none is.
func (c chartText) watchVariants(m rbacMode, o *unstructured.Unstructured) (string, error) {
	plain, err := c.rbacText(o)
	if err != nil {
		return "", err
	}
	if m.watched == nil {
		return plain, nil
	}
	watched, err := c.rbacText(find(m.watched, key(o)))
	if err != nil {
		return "", err
	}
	text := choose("$.Values.watchNamespaces", watched, plain)
	if ns := o.GetNamespace(); ns != "" {
		merged, err := c.rbacText(find(m.merged[ns], key(o)))
		if err != nil {
			return "", err
		}
		in := strconv.Quote(ns)
		if ns == namespaceHole {
			in = "$.Release.Namespace"
		}
		text = choose("has "+in+" "+watchList, merged, text)
	}
	return text, nil
}

// watchedText is the template of an object of the watched namespace watchHole, inside a
// range whose variable $ns is that namespace.
func (c chartText) watchedText(o *unstructured.Unstructured) (string, error) {
	text, err := c.rbacText(o)
	return strings.ReplaceAll(text, watchHole, "{{ $ns }}"), err
}

// rbacText is o's template text; nil (an object one variant lacks) is an error.
func (c chartText) rbacText(o *unstructured.Unstructured) (string, error) {
	if o == nil {
		return "", fmt.Errorf("an RBAC object of one watch case is missing in another")
	}
	o = o.DeepCopy()
	c.punch(o)
	c.punchBucketLeases(o)
	return c.templateText(o)
}

// choose renders yes when cond holds, else no; the one text when both are alike.
func choose(cond, yes, no string) string {
	if yes == no {
		return no
	}
	return "{{- if " + cond + " }}\n" + yes + "{{- else }}\n" + no + "{{- end }}\n"
}

func key(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
}

func find(objs []*unstructured.Unstructured, k string) *unstructured.Unstructured {
	for _, o := range objs {
		if key(o) == k {
			return o
		}
	}
	return nil
}

// punchBucketLeases puts a hole for the bucket Leases' names where rbacgen listed
// shardProbe of them.
func (c chartText) punchBucketLeases(o *unstructured.Unstructured) {
	rules, found, _ := unstructured.NestedSlice(o.Object, "rules")
	if !found {
		return
	}
	probe := make([]any, shardProbe)
	for i := range probe {
		probe[i] = naming.BucketLeaseName(nameHole, i, shardProbe)
	}
	for _, r := range rules {
		m := r.(map[string]any)
		if names, _ := m["resourceNames"].([]any); slices.Equal(names, probe) {
			m["resourceNames"] = []any{hole("BUCKET_LEASES")}
		}
	}
	_ = unstructured.SetNestedSlice(o.Object, rules, "rules")
}
