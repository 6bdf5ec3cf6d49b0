package related

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Target is one reference of a custom resource's last pass, with its type.
type Target struct {
	Resource schema.GroupResource
	Ref
	// WatchStatus: a status-only change of the object counts (payload.related[].watchStatus).
	WatchStatus bool
}

// Change is one event on a related type: the object's namespace, name, labels before and
// after (a selector matches either), and whether only status, resourceVersion or
// managedFields changed.
type Change struct {
	Resource   schema.GroupResource
	Namespace  string
	Name       string
	Old, New   labels.Set
	StatusOnly bool
}

// Index maps the references of each custom resource's last pass back to the custom
// resources. It is safe for concurrent use.
type Index struct {
	mu   sync.Mutex
	byCR map[string][]Target
	// byName are the custom resources per named object; bySpace the selector targets per
	// type and namespace.
	byName  map[objectKey]map[string]bool
	bySpace map[spaceKey]map[string]bool
}

type objectKey struct {
	gr        schema.GroupResource
	namespace string
	name      string
}

type spaceKey struct {
	gr        schema.GroupResource
	namespace string
}

// NewIndex returns an empty Index.
func NewIndex() *Index {
	return &Index{byCR: map[string][]Target{}, byName: map[objectKey]map[string]bool{}, bySpace: map[spaceKey]map[string]bool{}}
}

// Set replaces the references of the custom resource key with targets (its pass read them).
func (ix *Index) Set(key string, targets []Target) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.drop(key)
	if len(targets) == 0 {
		return
	}
	ix.byCR[key] = slices.Clone(targets)
	for _, t := range targets {
		if t.Selector != nil {
			add(ix.bySpace, spaceKey{t.Resource, t.Namespace}, key)
			continue
		}
		add(ix.byName, objectKey{t.Resource, t.Namespace, t.Name}, key)
	}
}

// Drop forgets the custom resource key (deleted).
func (ix *Index) Drop(key string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.drop(key)
}

func (ix *Index) drop(key string) {
	for _, t := range ix.byCR[key] {
		if t.Selector != nil {
			remove(ix.bySpace, spaceKey{t.Resource, t.Namespace}, key)
			continue
		}
		remove(ix.byName, objectKey{t.Resource, t.Namespace, t.Name}, key)
	}
	delete(ix.byCR, key)
}

// Affected returns the custom resources, sorted, whose last pass referred to the object of
// ch: by its name, or by a selector that matched it before or after the change. A
// status-only change counts only for references with WatchStatus.
func (ix *Index) Affected(ch Change) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []string
	consider := func(key string) {
		for _, t := range ix.byCR[key] {
			if t.Resource != ch.Resource || t.Namespace != ch.Namespace || (ch.StatusOnly && !t.WatchStatus) {
				continue
			}
			if t.Selector == nil && t.Name == ch.Name ||
				t.Selector != nil && (t.Selector.Matches(ch.Old) || t.Selector.Matches(ch.New)) {
				out = append(out, key)
				return
			}
		}
	}
	for key := range ix.byName[objectKey{ch.Resource, ch.Namespace, ch.Name}] {
		consider(key)
	}
	for key := range ix.bySpace[spaceKey{ch.Resource, ch.Namespace}] {
		if !slices.Contains(out, key) {
			consider(key)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Targets returns the references of key's last pass.
func (ix *Index) Targets(key string) []Target {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return slices.Clone(ix.byCR[key])
}

func add[K comparable](m map[K]map[string]bool, k K, key string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][key] = true
}

func remove[K comparable](m map[K]map[string]bool, k K, key string) {
	delete(m[k], key)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}
