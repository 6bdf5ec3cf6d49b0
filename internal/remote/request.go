package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"

	"github.com/orkspace/ork/internal/dotpath"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/render"
)

// preparedRequest is the body POSTed to the endpoint, in the seed's field order.
type preparedRequest struct {
	Key      string         `json:"key"`
	GVK      gvk            `json:"gvk"`
	Object   map[string]any `json:"object"`
	Args     any            `json:"args"`
	Prepared prepared       `json:"prepared"`
}

// gvk keeps Go's capitalised field names on the wire, as the seed shows them.
type gvk struct {
	Group   string
	Version string
	Kind    string
}

type prepared struct {
	Trigger    Trigger `json:"trigger"`
	Attempt    int     `json:"attempt"`
	Generation int64   `json:"generation"`
	Deleting   bool    `json:"deleting"`
	DryRun     bool    `json:"dryRun,omitempty"`
	// Target is omitted for ork's own cluster.
	Target string `json:"target,omitempty"`
	// Children is omitted when nil (children disabled) and {} when enabled but empty.
	Children map[string]map[string]map[string]any `json:"children,omitzero"`
	// Related is omitted when no payload.related entry is declared; each declared key is
	// present, [] when nothing was found.
	Related map[string][]map[string]any `json:"related,omitzero"`
	// LastApply is omitted when nil (disabled, or nothing applied yet) and [] when the
	// previous result had no resources.
	LastApply []AppliedResource `json:"lastApply,omitzero"`
	// Operation is omitted unless an operation is held or just timed out.
	Operation *operation.Prepared `json:"operation,omitempty"`
	// Callback is omitted unless ork serves completion callbacks and no operation is held.
	Callback *operation.Callback `json:"callback,omitempty"`
}

// buildBody renders the PreparedRequest of req as JSON. req.Object and req.Children are
// only read.
func (r *Reconciler) buildBody(req Request) ([]byte, error) {
	args, err := r.args(req.Object)
	if err != nil {
		return nil, err
	}
	meta, _ := req.Object["metadata"].(map[string]any)
	body := preparedRequest{
		Key:    req.Key,
		GVK:    r.gvk,
		Object: without(req.Object, r.objectExclude),
		Args:   args,
		Prepared: prepared{
			Trigger:    req.Trigger,
			Attempt:    req.Attempt,
			Generation: asInt64(meta["generation"]),
			Deleting:   meta["deletionTimestamp"] != nil && meta["deletionTimestamp"] != "",
			DryRun:     req.DryRun,
			Target:     req.Target,
			Operation:  req.Operation,
			Callback:   req.Callback,
		},
	}
	if r.childrenEnabled {
		body.Prepared.Children = make(map[string]map[string]map[string]any, len(req.Children))
		for typ, byName := range req.Children {
			out := make(map[string]map[string]any, len(byName))
			for name, obj := range byName {
				out[name] = tagTarget(without(obj, r.childrenExclude), req.Target)
			}
			body.Prepared.Children[typ] = out
		}
	}
	if len(r.related) > 0 {
		body.Prepared.Related = make(map[string][]map[string]any, len(r.related))
		for _, k := range r.related {
			objs := req.Related[k.as]
			out := make([]map[string]any, len(objs))
			for i, o := range objs {
				out[i] = without(o, k.exclude)
			}
			body.Prepared.Related[k.as] = out
		}
	}
	if r.lastApplyEnabled {
		body.Prepared.LastApply = req.LastApply
	}
	return encodeRequest(body)
}

// relatedKey is one payload.related entry's key and the paths removed from its objects.
type relatedKey struct {
	as      string
	exclude pathTree
}

// encodeRequest writes body as the JSON ork POSTs: decoding it gives body back (see
// FuzzPreparedRequestRoundTrip).
func encodeRequest(body preparedRequest) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Templates and labels often hold <, > and &; escaping them helps no reconciler.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return buf.Bytes(), nil
}

// pathTree is a set of exclude paths merged by prefix: a nil subtree means "remove this key",
// so each map on the way to removed keys is cloned once however many paths pass through it.
type pathTree map[string]pathTree

func newPathTree(paths []dotpath.Path) pathTree {
	if len(paths) == 0 {
		return nil
	}
	root := pathTree{}
	for _, p := range paths {
		t := root
		for i, key := range p {
			if i == len(p)-1 {
				t[key] = nil // removing a key removes whatever deeper paths asked for
				break
			}
			next, seen := t[key]
			if seen && next == nil {
				break // an ancestor is removed already
			}
			if next == nil {
				next = pathTree{}
				t[key] = next
			}
			t = next
		}
	}
	return root
}

// without returns obj minus the paths of t, sharing every subtree that no path touches: only
// the maps on the way to a removed key are copied. obj is never modified; the result is only
// marshalled, so sharing is safe, and it spares deep-copying what is about to be dropped
// (the usual exclude, metadata.managedFields, is the largest part of an object).
func without(obj map[string]any, t pathTree) map[string]any {
	if t == nil || obj == nil {
		return obj
	}
	out := maps.Clone(obj)
	for key, sub := range t {
		if sub == nil {
			delete(out, key)
			continue
		}
		if child, ok := out[key].(map[string]any); ok {
			out[key] = without(child, sub)
		}
	}
	return out
}

// tagTarget is obj with naming.TargetAnnotation set to target on a copy (the maps on its
// path cloned: obj is a cache's), or obj itself for ork's own cluster.
func tagTarget(obj map[string]any, target string) map[string]any {
	if target == "" || obj == nil {
		return obj
	}
	out := maps.Clone(obj)
	md, _ := out["metadata"].(map[string]any)
	md = maps.Clone(md)
	if md == nil {
		md = map[string]any{}
	}
	ann, _ := md["annotations"].(map[string]any)
	ann = maps.Clone(ann)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[naming.TargetAnnotation] = target
	md["annotations"] = ann
	out["metadata"] = md
	return out
}

func asInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// text is a string that may be a template, parsed once by New.
type text struct {
	raw string
	t   *template.Template
}

func compileText(name, s string) (text, error) {
	if !render.IsTemplate(s) {
		return text{raw: s}, nil
	}
	t, err := render.Parse(name, s)
	if err != nil {
		return text{}, fmt.Errorf("%s: %w", name, err)
	}
	return text{raw: s, t: t}, nil
}

func (x text) render(data map[string]any) (string, error) {
	if x.t == nil {
		return x.raw, nil
	}
	// render.Execute says in words which field the custom resource lacks, as a declarative
	// template's error does.
	return render.Execute(x.t, data)
}

// valueFunc renders a compiled args value against a CR.
type valueFunc func(data map[string]any) (any, error)

// compileArgs is render.Value split in two: templates are parsed once here (so a broken one
// fails New, not every reconcile) and executed per call, with render.Coerce on each result.
// Args are always sent as an object, {} when none are declared.
func compileArgs(name string, args map[string]any) (valueFunc, error) {
	if args == nil {
		args = map[string]any{}
	}
	return compileValue(name, args)
}

func compileValue(name string, v any) (valueFunc, error) {
	switch x := v.(type) {
	case string:
		if !render.IsTemplate(x) {
			return constant(x), nil
		}
		// Args are optional inputs: a CR without spec.logLevel sends null, not an error.
		t, err := render.ParseOptional(name, x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return func(data map[string]any) (any, error) {
			var b strings.Builder
			if err := t.Execute(&b, data); err != nil {
				return nil, fmt.Errorf("render %s: %w", name, err)
			}
			return render.Optional(b.String()), nil
		}, nil
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		fns := make([]valueFunc, len(keys))
		for i, k := range keys {
			f, err := compileValue(name+"."+k, x[k])
			if err != nil {
				return nil, err
			}
			fns[i] = f
		}
		return func(data map[string]any) (any, error) {
			out := make(map[string]any, len(keys))
			for i, k := range keys {
				v, err := fns[i](data)
				if err != nil {
					return nil, err
				}
				out[k] = v
			}
			return out, nil
		}, nil
	case []any:
		fns := make([]valueFunc, len(x))
		for i, e := range x {
			f, err := compileValue(fmt.Sprintf("%s[%d]", name, i), e)
			if err != nil {
				return nil, err
			}
			fns[i] = f
		}
		return func(data map[string]any) (any, error) {
			out := make([]any, len(fns))
			for i, f := range fns {
				v, err := f(data)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}, nil
	}
	return constant(v), nil
}

func constant(v any) valueFunc { return func(map[string]any) (any, error) { return v, nil } }
