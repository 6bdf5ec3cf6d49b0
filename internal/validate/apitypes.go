package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/apiresources"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/suggest"
)

// Options are the inputs of KatalogWith beyond the Katalog.
type Options struct {
	// APIResources lists API resources the cluster serves beyond the built-in ones and the
	// Katalog's CRDs (kubectl api-resources -o wide, parsed); default none.
	APIResources *apiresources.Table
}

// apiTypes is what a managedResources entry may name: Kubernetes' built-in resources, the
// CRDs of every -f file, and the resources the user listed.
type apiTypes struct {
	builtin *apiresources.Table
	// declared are the (group, plural) of the Katalogs' CRDs and of Options.APIResources.
	declared []apiresources.Resource
}

func newAPITypes(set *katalog.Set, opts Options) apiTypes {
	t := apiTypes{builtin: apiresources.Builtin()}
	for _, c := range set.CRDs {
		if c.APITypes != nil {
			r := apiresources.Resource{Group: c.APITypes.Group, Plural: c.APITypes.Plural, Kind: c.APITypes.Kind, Namespaced: c.IsNamespaced()}
			if c.APITypes.Version != "" {
				r.Versions = []string{c.APITypes.Version}
			}
			t.declared = append(t.declared, r)
		}
	}
	if opts.APIResources != nil {
		t.declared = append(t.declared, opts.APIResources.Resources...)
	}
	return t
}

func (t apiTypes) declares(group, plural string) bool {
	return slices.ContainsFunc(t.declared, func(r apiresources.Resource) bool {
		return r.Group == group && (plural == "" || r.Plural == plural)
	})
}

// pluralsOf lists, sorted, the declared plurals of group.
func (t apiTypes) pluralsOf(group string) []string {
	var out []string
	for _, r := range t.declared {
		if r.Group == group && r.Plural != "" && !slices.Contains(out, r.Plural) {
			out = append(out, r.Plural)
		}
	}
	slices.Sort(out)
	return out
}

// managedType checks one managedResources entry against the known API resources: a
// misspelt plural or group of a built-in type is an error (the apiserver would refuse the
// watch and ork run could not start), a group nobody declares a warning (a CRD installed
// apart from the Katalog may serve it).
func (k *checker) managedType(api apiTypes, entry string, i int, m katalog.ManagedResource) {
	g, p := m.Group, strings.ToLower(m.Plural)
	release := api.builtin.Release()
	if api.declares(g, p) {
		return
	}
	if r, ok := api.builtin.Lookup(g, p); ok {
		if m.Version != "" && !slices.Contains(r.Versions, m.Version) {
			gv := m.Version
			if g != "" {
				gv = g + "/" + m.Version
			}
			k.errorAt(katalog.RuleManagedResourceType, entry+".version", fmt.Sprintf("managedResources[%d]: %s %s is not served by %s", i, gv, p, release),
				fmt.Sprintf("served versions: %s; or leave version out for the preferred one", strings.Join(r.Versions, ", ")))
		}
		return
	}
	if api.builtin.HasGroup(g) {
		hint := fmt.Sprintf("the resources of %s: %s", groupName(g), strings.Join(api.builtin.Plurals(g), ", "))
		if others := api.builtin.GroupsOf(p); len(others) > 0 {
			hint = fmt.Sprintf("%s is in %s: did you mean {group: %q, plural: %s}?", p, groupName(others[0]), others[0], p)
		} else if near := suggest.Nearest(p, api.builtin.Plurals(g)); near != "" {
			hint = fmt.Sprintf("did you mean {group: %q, plural: %s}?", g, near)
		}
		k.errorAt(katalog.RuleManagedResourceType, entry+".plural", fmt.Sprintf("managedResources[%d]: %s has no resource %q in %s", i, groupName(g), p, release), hint)
		return
	}
	if api.declares(g, "") {
		// A group of the Katalog's CRDs or --api-resources: the plural must be one of theirs,
		// or ork run's watch of it fails at start and rbac gen grants a type that is not there.
		plurals := api.pluralsOf(g)
		hint := fmt.Sprintf("the plurals declared in %s: %s", groupName(g), strings.Join(plurals, ", "))
		if near := suggest.Nearest(p, plurals); near != "" {
			hint = fmt.Sprintf("did you mean {group: %q, plural: %s}?", g, near)
		}
		k.errorAt(katalog.RuleManagedResourceType, entry+".plural", fmt.Sprintf("managedResources[%d]: no CRD of the -f files declares %q in %s", i, p, groupName(g)),
			hint+" (a CRD installed apart from this Katalog: pass ork validate --api-resources FILE, the output of kubectl api-resources -o wide)")
		return
	}
	if near := nearGroup(api.builtin, g, p); near != nil {
		k.errorAt(katalog.RuleManagedResourceType, entry+".group", fmt.Sprintf("managedResources[%d]: %q is no API group of %s", i, g, release),
			fmt.Sprintf("did you mean {group: %q, plural: %s}?", *near, p))
		return
	}
	k.warnAt(katalog.RuleUnknownAPIGroup, entry+".group", fmt.Sprintf("managedResources[%d]: group %q is neither an API group of %s nor declared by a CRD of the -f files (apiTypes or crdFile)", i, g, release),
		"ork run needs the cluster to serve it: if a CRD installed apart from this Katalog does, pass ork validate --api-resources FILE (the output of kubectl api-resources -o wide)")
}

// nearGroup is the built-in group the user probably meant for plural: "app" for apps, and
// "core" or "v1" for the core group "".
func nearGroup(t *apiresources.Table, group, plural string) *string {
	return nearest(group, t.GroupsOf(plural))
}

// nearGroupOfKind is nearGroup for a kind.
func nearGroupOfKind(t *apiresources.Table, group, kind string) *string {
	return nearest(group, t.GroupsOfKind(kind))
}

// nearest is the candidate group nearest to group; nil when none is near.
func nearest(group string, candidates []string) *string {
	if (group == "core" || group == "v1") && slices.Contains(candidates, "") {
		core := ""
		return &core
	}
	if near := suggest.Nearest(group, candidates); near != "" {
		return &near
	}
	return nil
}

// groupName names a group in messages: the core group "" reads as such.
func groupName(g string) string {
	if g == "" {
		return `the core group ""`
	}
	return fmt.Sprintf("group %q", g)
}

// customKind checks the literal apiVersion and kind of a declarative custom entry the way
// managedType checks a managedResources entry: a kind or version a built-in group lacks is
// an error (the apply would fail on every reconcile), a group nobody declares a warning.
func (k *checker) customKind(api apiTypes, at string, e map[string]any) {
	apiVersion, _ := e["apiVersion"].(string)
	kind, _ := e["kind"].(string)
	if apiVersion == "" || kind == "" || hasTemplate(apiVersion) || hasTemplate(kind) {
		return // missing ones are the entry check's; templated ones are known at reconcile time
	}
	g, v, ok := strings.Cut(apiVersion, "/")
	if !ok {
		g, v = "", apiVersion
	}
	release := api.builtin.Release()
	if api.builtin.HasGroup(g) {
		r, found := api.builtin.LookupKind(g, kind)
		switch {
		case !found:
			hint := fmt.Sprintf("the kinds of %s: %s", groupName(g), strings.Join(api.builtin.Kinds(g), ", "))
			if others := api.builtin.GroupsOfKind(kind); len(others) > 0 {
				hint = fmt.Sprintf("%s is in %s: did you mean apiVersion %s?", kind, groupName(others[0]), apiVersionOf(api.builtin, others[0], kind))
			} else if near := suggest.Nearest(kind, api.builtin.Kinds(g)); near != "" {
				hint = fmt.Sprintf("did you mean kind %s?", near)
			}
			k.errorAt(katalog.RuleCustomKind, at+".kind", fmt.Sprintf("custom entry: %s has no kind %q in %s", groupName(g), kind, release), hint)
		case !slices.Contains(r.Versions, v):
			k.errorAt(katalog.RuleCustomKind, at+".apiVersion", fmt.Sprintf("custom entry: %s %s is not served by %s", apiVersion, kind, release),
				fmt.Sprintf("served versions: %s", strings.Join(r.Versions, ", ")))
		}
		return
	}
	if api.declares(g, "") {
		return
	}
	if near := nearGroupOfKind(api.builtin, g, kind); near != nil {
		k.errorAt(katalog.RuleCustomKind, at+".apiVersion", fmt.Sprintf("custom entry: %q is no API group of %s", g, release),
			fmt.Sprintf("did you mean apiVersion %s?", apiVersionOf(api.builtin, *near, kind)))
		return
	}
	k.warnAt(katalog.RuleUnknownAPIGroup, at+".apiVersion", fmt.Sprintf("custom entry: group %q is neither an API group of %s nor declared by a CRD of the -f files (apiTypes or crdFile)", g, release),
		"ork run needs the cluster to serve it: if a CRD installed apart from this Katalog does, pass ork validate --api-resources FILE (the output of kubectl api-resources -o wide)")
}

// apiVersionOf is the preferred apiVersion of kind in group: "apps/v1", "v1".
func apiVersionOf(t *apiresources.Table, group, kind string) string {
	r, _ := t.LookupKind(group, kind)
	v := ""
	if len(r.Versions) > 0 {
		v = r.Versions[0]
	}
	if group == "" {
		return v
	}
	return group + "/" + v
}
