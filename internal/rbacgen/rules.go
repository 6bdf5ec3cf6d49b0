package rbacgen

import (
	"cmp"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Rules turns permissions into PolicyRules: one rule per API group, verb set and set of
// resource names, listing every resource that shares them. Resources, names and rules are
// sorted, so equal input gives equal rules.
func Rules(perms []Permission) []rbacv1.PolicyRule {
	type target struct{ group, resource, name string }
	verbs := map[target][]string{}
	for _, p := range perms {
		t := target{p.Group, p.Resource, p.Name}
		if p.Subresource != "" {
			t.resource += "/" + p.Subresource
		}
		if !slices.Contains(verbs[t], p.Verb) {
			verbs[t] = append(verbs[t], p.Verb)
		}
	}

	// A rule's resourceNames apply to all its resources, so named grants are first grouped
	// per resource (all names with the same verbs), then merged like unnamed ones.
	type named struct{ group, resource, verbs string }
	names := map[named][]string{}
	type ruleKey struct{ group, verbs, names string }
	merged := map[ruleKey][]string{}
	for t, vs := range verbs {
		slices.SortFunc(vs, compareVerbs)
		vk := strings.Join(vs, ",")
		if t.name == "" {
			k := ruleKey{t.group, vk, ""}
			merged[k] = append(merged[k], t.resource)
			continue
		}
		k := named{t.group, t.resource, vk}
		names[k] = append(names[k], t.name)
	}
	for n, ns := range names {
		slices.Sort(ns)
		k := ruleKey{n.group, n.verbs, strings.Join(ns, ",")}
		merged[k] = append(merged[k], n.resource)
	}

	rules := make([]rbacv1.PolicyRule, 0, len(merged))
	for k, res := range merged {
		slices.Sort(res)
		r := rbacv1.PolicyRule{
			APIGroups: []string{k.group},
			Resources: res,
			Verbs:     strings.Split(k.verbs, ","),
		}
		if k.names != "" {
			r.ResourceNames = strings.Split(k.names, ",")
		}
		rules = append(rules, r)
	}
	slices.SortFunc(rules, compareRules)
	return rules
}

func compareRules(a, b rbacv1.PolicyRule) int {
	return cmp.Or(
		strings.Compare(a.APIGroups[0], b.APIGroups[0]),
		strings.Compare(strings.Join(a.Resources, ","), strings.Join(b.Resources, ",")),
		strings.Compare(strings.Join(a.ResourceNames, ","), strings.Join(b.ResourceNames, ",")),
		slices.CompareFunc(a.Verbs, b.Verbs, compareVerbs),
	)
}
