package rollout

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
)

// Answer is one reconciler's answer to a pass, normalised for comparison: the objects are
// those the shared planner built from the answer's resources (what ork would apply), not the
// JSON the reconciler sent, so that two answers that build the same objects do not diverge.
type Answer struct {
	// Result is "ok", "requeue" or "error"; "" counts as "ok".
	Result       string
	RequeueAfter time.Duration
	Status       map[string]any
	Objects      []*unstructured.Unstructured
}

// ignoredMetadata are the fields of a built object that say how ork wrote it, not what the
// reconciler asked for: the applied digest follows from the rest and would double every
// divergence.
var ignoredMetadata = []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp"}

// maxPaths bounds one comparison's report: a reconciler that changed everything is reported
// as the first paths in order and a count, not as an unbounded list.
const maxPaths = 50

// Diff returns the field paths where candidate differs from stable, sorted, at most maxPaths
// plus, when there were more, a last entry saying how many were left out. Paths name fields,
// never values: a value may be a secret. An object is named by apiVersion, kind, namespace
// and name: `objects[apps/v1 Deployment ns/web].spec.replicas`; an object only one side
// builds is reported as `objects[…]` alone.
func Diff(stable, candidate Answer) []string {
	var paths []string
	if result(stable.Result) != result(candidate.Result) {
		paths = append(paths, "result")
	}
	if stable.RequeueAfter != candidate.RequeueAfter {
		paths = append(paths, "requeueAfter")
	}
	paths = diffValue(paths, "status", normalise(stable.Status), normalise(candidate.Status))
	s, c := byName(stable.Objects), byName(candidate.Objects)
	for _, name := range unionKeys(s, c) {
		at := "objects[" + name + "]"
		so, sok := s[name]
		co, cok := c[name]
		if !sok || !cok {
			paths = append(paths, at)
			continue
		}
		paths = diffValue(paths, at, so, co)
	}
	sort.Strings(paths)
	if len(paths) > maxPaths {
		more := len(paths) - maxPaths
		paths = append(paths[:maxPaths:maxPaths], fmt.Sprintf("… and %d more", more))
	}
	return paths
}

func result(r string) string {
	if r == "" {
		return "ok"
	}
	return r
}

// normalise makes a nil map and an empty one the same answer: no status to merge.
func normalise(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

func byName(objs []*unstructured.Unstructured) map[string]any {
	out := make(map[string]any, len(objs))
	for _, o := range objs {
		name := fmt.Sprintf("%s %s %s/%s", o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
		c := o.DeepCopy().Object
		if md, ok := c["metadata"].(map[string]any); ok {
			for _, f := range ignoredMetadata {
				delete(md, f)
			}
			if ann, ok := md["annotations"].(map[string]any); ok {
				delete(ann, naming.AppliedAnnotation)
				if len(ann) == 0 {
					delete(md, "annotations")
				}
			}
		}
		out[name] = c
	}
	return out
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// diffValue appends the paths under at where a and b differ. Maps are compared key by key;
// lists of equal length element by element, lists of different length as one path.
func diffValue(paths []string, at string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for _, k := range unionKeys(am, bm) {
			paths = diffValue(paths, at+"."+key(k), am[k], bm[k])
		}
		return paths
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			paths = diffValue(paths, fmt.Sprintf("%s[%d]", at, i), al[i], bl[i])
		}
		return paths
	}
	if !equalScalar(a, b) {
		paths = append(paths, at)
	}
	return paths
}

// equalScalar compares decoded JSON values; numbers compare by value whatever their Go type
// (int64 from the planner, float64 from a decoder).
func equalScalar(a, b any) bool {
	if af, ok := number(a); ok {
		bf, ok := number(b)
		return ok && af == bf
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// key writes a map key into a dot path, escaping dots as ork's dot-paths do.
func key(k string) string { return strings.ReplaceAll(k, ".", `\.`) }
