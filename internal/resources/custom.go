package resources

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// buildCustom builds an object of any kind from {apiVersion, kind, name, spec, data, ...}.
func buildCustom(fields map[string]any, opts Options) (Object, error) {
	r := &reader{typ: Custom, m: fields}
	r.check(TypeInfo{Type: Custom}.Fields())
	if r.err != nil && r.err.Msg == "required" && (r.err.Field == "kind" || r.err.Field == "apiVersion") {
		r.err.Msg = "required: custom has no kind to infer, so fields must set apiVersion and kind"
	}
	apiVersion, kind := r.str("apiVersion"), r.str("kind")
	meta := map[string]any{"name": r.str("name")}
	if ns := r.str("namespace"); ns != "" {
		meta["namespace"] = ns
	}
	meta["labels"] = toAny(objectLabels(r.stringMap("labels")))
	if a := r.stringMap("annotations"); a != nil {
		meta["annotations"] = toAny(a)
	}
	spec := r.mapping("spec")
	if r.err != nil {
		return Object{}, r.err
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	if spec != nil {
		obj["spec"] = normalize(spec)
	}
	if data, ok := r.get("data"); ok {
		obj["data"] = normalize(data)
	}
	return finish(&unstructured.Unstructured{Object: obj}, Custom, opts)
}

// buildFull checks and copies a full object: apiVersion, kind and metadata.name are required;
// what the server or other controllers own is dropped (stripServerFields).
func buildFull(raw map[string]any, opts Options) (Object, error) {
	obj := normalize(raw).(map[string]any) // a copy: stripping never touches raw
	stripServerFields(obj)
	typ, _ := obj["kind"].(string)
	if typ == "" {
		typ = "object"
	}
	fail := func(field, msg string) (Object, error) {
		return Object{}, &FieldError{Type: typ, Field: field, Msg: msg}
	}
	for _, f := range []string{"apiVersion", "kind"} {
		switch v := obj[f].(type) {
		case string:
			if v == "" {
				return fail(f, "required, got an empty string")
			}
		case nil:
			return fail(f, "required")
		default:
			return fail(f, "expected a string, got "+describe(v))
		}
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return fail("metadata.name", "required")
	}
	if name, _ := meta["name"].(string); name == "" {
		return fail("metadata.name", "required")
	}
	labels, _, err := unstructured.NestedStringMap(obj, "metadata", "labels")
	if err != nil {
		return fail("metadata.labels", "expected a mapping of strings")
	}
	meta["labels"] = toAny(objectLabels(labels))
	return finish(&unstructured.Unstructured{Object: obj}, typ, opts)
}

// finish resolves the object's type and, for a built-in kind, defaults its namespace and
// checks it against the typed API so a misspelt field fails here, not at apply time.
func finish(u *unstructured.Unstructured, typ string, opts Options) (Object, error) {
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		return Object{}, &FieldError{Type: typ, Field: "apiVersion", Msg: err.Error()}
	}
	gvk := gv.WithKind(u.GetKind())
	t, builtin := LookupKind(gvk.GroupKind())
	if !builtin {
		return Object{Obj: u, Type: TypeInfo{Type: Custom, Block: "customs", GVK: gvk}}, nil
	}
	if u.GetNamespace() == "" && opts.Namespace != "" {
		u.SetNamespace(opts.Namespace)
	}
	if typed := newTyped(t.Type); typed != nil && gvk == t.GVK {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, typed, true); err != nil {
			return Object{}, &FieldError{Type: typ, Msg: err.Error()}
		}
	}
	t.GVK = gvk
	return Object{Obj: u, Type: t}, nil
}

// newTyped returns an empty typed object of a built-in intent type.
func newTyped(typ string) any {
	switch typ {
	case "deployment":
		return &appsv1.Deployment{}
	case "statefulset":
		return &appsv1.StatefulSet{}
	case "daemonset":
		return &appsv1.DaemonSet{}
	case "job":
		return &batchv1.Job{}
	case "cronjob":
		return &batchv1.CronJob{}
	case "service":
		return &corev1.Service{}
	case "configmap":
		return &corev1.ConfigMap{}
	case "secret":
		return &corev1.Secret{}
	case "serviceaccount":
		return &corev1.ServiceAccount{}
	case "ingress":
		return &networkingv1.Ingress{}
	case "persistentvolumeclaim":
		return &corev1.PersistentVolumeClaim{}
	}
	return nil
}

// normalize deep-copies a JSON-like value and turns whole numbers into int64, the type the
// apimachinery JSON decoder yields, so objects compare and deep-copy cleanly.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case nil, string, bool, int64:
		return x
	}
	// Any other Go value (a []string from a Go caller): take its JSON form.
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return fmt.Sprint(v)
	}
	return normalize(out)
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
