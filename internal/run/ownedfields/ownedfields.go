// Package ownedfields tells whether a field manager still owns every field of an object it
// would apply: the drift check behind skipping a write (docs/architecture.md).
//
// The apiserver records, per field manager, the set of fields it owns (managedFields). An
// apply gives its manager exactly the fields it sent; anything another writer does to one of
// them takes it away: a removal (a JSON patch, `kubectl label key-`), another manager's
// update or forced apply, a write through the scale subresource. So "ork's entry still holds
// every field ork would send" is the test for "nothing ork wrote has changed", whatever the
// edit and whatever the clocks say. List items are keyed (containers by name, ports by port
// and protocol) as the server's own OpenAPI says, so the set is computed with the type
// converter the apiserver itself uses, built from its /openapi/v3 document per kind.
package ownedfields

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Checker answers Owns for one field manager, caching a type converter per kind.
type Checker struct {
	client  openapi.ClientWithContext
	manager string
	now     func() time.Time
	// refresh is how long a kind's converter is used before the server is asked whether its
	// schema changed (a CRD update); retry is how long a failure is remembered.
	refresh, retry time.Duration

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*kind
}

// kind is one kind's converter, built from its group-version's OpenAPI document.
type kind struct {
	mu sync.Mutex // one fetch at a time per kind
	// url is the document's server-relative URL, whose hash changes with the schema.
	url     string
	tc      managedfields.TypeConverter
	err     error
	checked time.Time
}

// Options configure a Checker.
type Options struct {
	// Client reads the server's OpenAPI v3 documents; nil answers every Owns with false.
	Client openapi.ClientWithContext
	// Manager is the field manager whose entry is checked.
	Manager string
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Refresh is how long a kind's schema is trusted before the server is asked again
	// whether it changed; default 10 minutes.
	Refresh time.Duration
	// Retry is how long a failure to read a schema is remembered (meanwhile every Owns of
	// that kind answers false); default 30 seconds.
	Retry time.Duration
}

// New returns a Checker.
func New(o Options) *Checker {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Refresh <= 0 {
		o.Refresh = 10 * time.Minute
	}
	if o.Retry <= 0 {
		o.Retry = 30 * time.Second
	}
	return &Checker{client: o.Client, manager: o.Manager, now: o.Now, refresh: o.Refresh, retry: o.Retry,
		kinds: map[schema.GroupVersionKind]*kind{}}
}

// Owns reports whether the manager's entry in entries holds every field of obj, the object
// it would apply: its Apply entry, or, before it ever applied, the Update entry its create
// left (a superset: a create's entry owns the server's defaults too). Entries of
// subresources are not the manager's object. It answers false whenever that cannot be told:
// no such entry, an entry of another API version, a kind whose schema the server does not
// give, an object its schema refuses. A false answer costs one apply.
func (c *Checker) Owns(ctx context.Context, obj *unstructured.Unstructured, entries []metav1.ManagedFieldsEntry) (bool, error) {
	entry, ok := c.entry(entries, obj.GetAPIVersion())
	if !ok || entry.FieldsV1 == nil {
		return false, nil
	}
	var owned fieldpath.Set
	if err := owned.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
		return false, fmt.Errorf("decode the managed fields of %s: %w", c.manager, err)
	}
	// The apiserver keeps status out of the object's Apply entry when the kind has a status
	// subresource: a status in the applied object would never look owned.
	if _, ok := obj.Object["status"]; ok {
		obj = obj.DeepCopy()
		delete(obj.Object, "status")
	}
	want, err := c.FieldSet(ctx, obj)
	if err != nil {
		return false, err
	}
	return want.Difference(&owned).Empty(), nil
}

// entry is the manager's Apply entry of the object itself, else its Update entry of
// apiVersion. An Apply entry of another version is not comparable: no entry.
func (c *Checker) entry(entries []metav1.ManagedFieldsEntry, apiVersion string) (metav1.ManagedFieldsEntry, bool) {
	var update *metav1.ManagedFieldsEntry
	for i, e := range entries {
		if e.Manager != c.manager || e.Subresource != "" {
			continue
		}
		if e.Operation == metav1.ManagedFieldsOperationApply {
			return e, e.APIVersion == apiVersion
		}
		if update == nil && e.APIVersion == apiVersion {
			update = &entries[i]
		}
	}
	if update == nil {
		return metav1.ManagedFieldsEntry{}, false
	}
	return *update, true
}

// stripped are the fields the apiserver never records in managedFields.
var stripped = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// FieldSet is the set of fields an apply of obj gives its manager, as the server records
// them.
func (c *Checker) FieldSet(ctx context.Context, obj *unstructured.Unstructured) (*fieldpath.Set, error) {
	tc, err := c.converter(ctx, obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	tv, err := tc.ObjectToTyped(obj, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return set.Difference(stripped), nil
}

// converter is gvk's type converter, from the cache or the server.
func (c *Checker) converter(ctx context.Context, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	if c.client == nil {
		return nil, fmt.Errorf("%s: no OpenAPI client", gvk)
	}
	c.mu.Lock()
	k := c.kinds[gvk]
	if k == nil {
		k = &kind{}
		c.kinds[gvk] = k
	}
	c.mu.Unlock()

	k.mu.Lock()
	defer k.mu.Unlock()
	now := c.now()
	switch {
	case k.err != nil && now.Sub(k.checked) < c.retry:
		return nil, k.err
	case k.tc != nil && now.Sub(k.checked) < c.refresh:
		return k.tc, nil
	}
	k.checked = now
	// Not the pass's context: a pass cut short would leave the whole kind without a
	// converter until the retry.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	gv, err := c.document(ctx, gvk.GroupVersion())
	if err != nil {
		// The old converter is dropped: the schema it was built from may be gone.
		k.tc, k.err = nil, err
		return nil, err
	}
	if k.tc != nil && gv.ServerRelativeURL() == k.url {
		k.err = nil
		return k.tc, nil // the schema has not changed
	}
	tc, err := build(ctx, gv, gvk)
	if err != nil {
		k.tc, k.err = nil, err
		return nil, err
	}
	k.tc, k.url, k.err = tc, gv.ServerRelativeURL(), nil
	return tc, nil
}

// document is gv's entry in the server's OpenAPI v3 discovery.
func (c *Checker) document(ctx context.Context, gv schema.GroupVersion) (openapi.GroupVersionWithContext, error) {
	paths, err := c.client.PathsWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 discovery: %w", err)
	}
	path := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	doc, ok := paths[path]
	if !ok {
		return nil, fmt.Errorf("openapi v3: the server publishes no document for %s", gv)
	}
	return doc, nil
}

// build reads gv's document and makes a converter of only gvk's schema and what it refers to:
// a whole group-version's schemas would be held for every kind of it ork never writes.
func build(ctx context.Context, gv openapi.GroupVersionWithContext, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	raw, err := gv.SchemaWithContext(ctx, "application/json")
	if err != nil {
		return nil, fmt.Errorf("openapi v3 %s: %w", gvk.GroupVersion(), err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("openapi v3 %s: %w", gvk.GroupVersion(), err)
	}
	if doc.Components == nil {
		return nil, fmt.Errorf("openapi v3 %s: no schemas", gvk.GroupVersion())
	}
	root := rootOf(doc.Components.Schemas, gvk)
	if root == "" {
		return nil, fmt.Errorf("openapi v3 %s: no schema of kind %s", gvk.GroupVersion(), gvk.Kind)
	}
	kept := map[string]*spec.Schema{}
	reach(doc.Components.Schemas, root, kept)
	tc, err := managedfields.NewTypeConverter(kept, false)
	if err != nil {
		return nil, fmt.Errorf("openapi v3 %s: %w", gvk, err)
	}
	return tc, nil
}

// rootOf is the name of the schema of gvk, found by its x-kubernetes-group-version-kind.
func rootOf(schemas map[string]*spec.Schema, gvk schema.GroupVersionKind) string {
	for name, s := range schemas {
		kinds, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, k := range kinds {
			m, _ := k.(map[string]any)
			if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
				return name
			}
		}
	}
	return ""
}

// reach adds name and every schema it refers to, transitively, to kept.
func reach(schemas map[string]*spec.Schema, name string, kept map[string]*spec.Schema) {
	if _, done := kept[name]; done {
		return
	}
	s, ok := schemas[name]
	if !ok {
		return
	}
	kept[name] = s
	walk(s, func(ref string) { reach(schemas, ref, kept) })
}

// walk calls found with the name of every schema s refers to.
func walk(s *spec.Schema, found func(string)) {
	if s == nil {
		return
	}
	if ref := s.Ref.String(); ref != "" {
		found(strings.TrimPrefix(ref, "#/components/schemas/"))
	}
	for _, p := range s.Properties {
		walk(&p, found)
	}
	if s.AdditionalProperties != nil {
		walk(s.AdditionalProperties.Schema, found)
	}
	if s.Items != nil {
		walk(s.Items.Schema, found)
		for i := range s.Items.Schemas {
			walk(&s.Items.Schemas[i], found)
		}
	}
	for _, group := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range group {
			walk(&group[i], found)
		}
	}
	walk(s.Not, found)
}
