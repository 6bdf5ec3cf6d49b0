package rbacgen

import (
	"fmt"
	"slices"

	"github.com/orkspace/ork/internal/apiresources"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
)

// related grants what ork does with payload.related: get, list and watch, nothing more. ork
// watches each related type's metadata to find the custom resources a change concerns, and
// reads the objects at pass time. Secrets are the exception: a constant name is read and
// watched by that name only (resourceNames; the watch carries a field selector on it), a
// templated one only read (get), never listed or watched.
func (c *collector) related(set *katalog.Set, at string, entries []katalog.Related) {
	for i, e := range entries {
		where := fmt.Sprintf("%s.operatorBox.reconcile.remote.payload.related[%d]", at, i)
		plural, ok := relatedPlural(set, e)
		if !ok {
			c.warnf("%s: the plural of %s %q is not known (not a built-in kind nor a CRD of this Katalog): guessed as %q; check it", where, groupWord(e.Group), e.Kind, plural)
		}
		if plural == "" {
			continue
		}
		constant := e.Selector == nil && e.Name != "" && !render.IsTemplate(e.Name)
		namespace := ""
		if e.Namespace != "" && !render.IsTemplate(e.Namespace) && c.scopes.namespaced(e.Group, plural) {
			namespace = e.Namespace // one namespace named outright: a Role there
		}
		grant := func(name string, verbs ...string) {
			if name != "" {
				verbs = slices.DeleteFunc(slices.Clone(verbs), func(v string) bool { return c.covered(namespace, e.Group, plural, v) })
			}
			if namespace != "" {
				c.addIn(namespace, e.Group, plural, "", name, verbs...)
				return
			}
			if name == "" {
				c.addWatched(e.Group, plural, "", verbs...)
				return
			}
			c.addNamedWatched(e.Group, plural, name, verbs...)
		}
		if e.Group == "" && plural == "secrets" {
			if constant {
				grant(e.Name, readVerbs...)
			} else {
				grant("", "get")
			}
			continue
		}
		grant("", "list", "watch")
		if constant {
			grant(e.Name, "get")
		} else {
			grant("", "get")
		}
	}
}

// addNamedWatched is addWatched for one object name.
func (c *collector) addNamedWatched(group, resource, name string, verbs ...string) {
	if len(c.watch) == 0 || !c.scopes.namespaced(group, resource) {
		c.add(group, resource, "", name, verbs...)
		return
	}
	for _, ns := range c.watch {
		c.addIn(ns, group, resource, "", name, verbs...)
	}
}

// relatedPlural is the resource name of a related entry: its plural, or its kind's from the
// Katalog's CRDs or the built-in table, else kubectl's guess (ok false).
func relatedPlural(set *katalog.Set, e katalog.Related) (string, bool) {
	if e.Plural != "" {
		return e.Plural, true
	}
	if e.Kind == "" {
		return "", true
	}
	if r, found := apiresources.Builtin().LookupKind(e.Group, e.Kind); found {
		return r.Plural, true
	}
	return pluralOf(set, e.Group, e.Kind)
}

func groupWord(g string) string {
	if g == "" {
		return "the core group"
	}
	return "group " + g
}

// covered reports whether verb on any object of the type is granted already, in namespace
// or cluster-wide: then a by-name grant adds nothing ("nothing for types already granted").
func (c *collector) covered(namespace, group, resource, verb string) bool {
	p := Permission{Verb: verb, Group: group, Resource: resource, Namespace: namespace}
	_, same := c.perms[p]
	p.Namespace = ""
	_, cluster := c.perms[p]
	return same || cluster
}
