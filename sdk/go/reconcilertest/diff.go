package reconcilertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxPaths bounds one comparison, as ork's: the first paths in order and a count.
const maxPaths = 50

// kinds are the apiVersion and kind ork builds for each built-in intent type.
var kinds = map[string][2]string{
	"configmap":             {"v1", "ConfigMap"},
	"cronjob":               {"batch/v1", "CronJob"},
	"daemonset":             {"apps/v1", "DaemonSet"},
	"deployment":            {"apps/v1", "Deployment"},
	"ingress":               {"networking.k8s.io/v1", "Ingress"},
	"job":                   {"batch/v1", "Job"},
	"persistentvolumeclaim": {"v1", "PersistentVolumeClaim"},
	"secret":                {"v1", "Secret"},
	"service":               {"v1", "Service"},
	"serviceaccount":        {"v1", "ServiceAccount"},
	"statefulset":           {"apps/v1", "StatefulSet"},
}

// ignoredMetadata are the fields of an object that say how it was written, not what the
// reconciler asked for (ork's shadow comparison leaves the same out).
var ignoredMetadata = []string{"managedFields", "resourceVersion", "uid", "generation", "creationTimestamp"}

// Diff returns the field paths where answer differs from recorded (two RemoteReconcileResult
// bodies for a custom resource in namespace), sorted, as `ork rollout diff` reports them:
// "result", "requeueAfter", "status.<path>", and "objects[<apiVersion> <Kind> <ns>/<name>]"
// for an object only one side has, followed by the path of a differing field. Paths name
// fields, never values. ork compares the objects its planner builds from the answers; this
// compares the answers' own entries, so a path under an intent entry names the field the
// reconciler wrote (objects[apps/v1 Deployment default/web].fields.replicas where ork says
// .spec.replicas); numbers compare by value, and a string that spells a number or a boolean
// equals it, as ork's builders coerce it.
func Diff(recorded, answer []byte, namespace string) ([]string, error) {
	r, err := decodeAnswer(recorded, namespace)
	if err != nil {
		return nil, fmt.Errorf("recorded answer: %w", err)
	}
	a, err := decodeAnswer(answer, namespace)
	if err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	var paths []string
	if r.result != a.result {
		paths = append(paths, "result")
	}
	if r.requeueAfter != a.requeueAfter {
		paths = append(paths, "requeueAfter")
	}
	paths = diffValue(paths, "status", r.status, a.status)
	for _, name := range unionKeys(r.objects, a.objects) {
		at := "objects[" + name + "]"
		ro, rok := r.objects[name]
		ao, aok := a.objects[name]
		if !rok || !aok {
			paths = append(paths, at)
			continue
		}
		paths = diffValue(paths, at, ro, ao)
	}
	slices.Sort(paths)
	if len(paths) > maxPaths {
		more := len(paths) - maxPaths
		paths = append(paths[:maxPaths:maxPaths], fmt.Sprintf("… and %d more", more))
	}
	return paths, nil
}

// answer is a result normalised for comparison.
type answer struct {
	result       string
	requeueAfter time.Duration
	status       any
	objects      map[string]any
}

func decodeAnswer(body []byte, namespace string) (answer, error) {
	var raw struct {
		Result       *string          `json:"result"`
		RequeueAfter *string          `json:"requeueAfter"`
		Status       map[string]any   `json:"status"`
		Resources    []map[string]any `json:"resources"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return answer{}, err
	}
	a := answer{result: "ok", objects: map[string]any{}}
	if raw.Result != nil && *raw.Result != "" {
		a.result = *raw.Result
	}
	if raw.RequeueAfter != nil && *raw.RequeueAfter != "" {
		d, err := time.ParseDuration(*raw.RequeueAfter)
		if err != nil {
			return answer{}, fmt.Errorf("requeueAfter: %w", err)
		}
		a.requeueAfter = d
	}
	if len(raw.Status) > 0 { // nil and {} are the same answer: no status to merge
		a.status = raw.Status
	}
	for i, res := range raw.Resources {
		name, obj, err := identify(res, namespace)
		if err != nil {
			return answer{}, fmt.Errorf("resources[%d]: %w", i, err)
		}
		a.objects[name] = obj
	}
	return a, nil
}

// identify names an entry as ork names the object it builds: apiVersion, kind, namespace
// and name; it returns what is compared of it.
func identify(res map[string]any, namespace string) (string, any, error) {
	if fields, ok := res["fields"].(map[string]any); ok {
		typ, _ := res["type"].(string)
		gk, ok := kinds[typ]
		if typ == "custom" {
			gk, ok = [2]string{text(fields["apiVersion"]), text(fields["kind"])}, true
		}
		if !ok {
			return "", nil, fmt.Errorf("unknown intent type %q", typ)
		}
		ns := text(fields["namespace"])
		if ns == "" {
			ns = namespace
		}
		c := map[string]any{"fields": fields}
		if fc, ok := res["forceConflict"]; ok && fc != nil {
			c["forceConflict"] = fc
		}
		return fmt.Sprintf("%s %s %s/%s", gk[0], gk[1], ns, text(fields["name"])), c, nil
	}
	md, _ := res["metadata"].(map[string]any)
	ns := text(md["namespace"])
	if ns == "" {
		ns = namespace
	}
	name := fmt.Sprintf("%s %s %s/%s", text(res["apiVersion"]), text(res["kind"]), ns, text(md["name"]))
	c := make(map[string]any, len(res))
	for k, v := range res {
		c[k] = v
	}
	if md != nil {
		m := make(map[string]any, len(md))
		for k, v := range md {
			if !slices.Contains(ignoredMetadata, k) {
				m[k] = v
			}
		}
		c["metadata"] = m
	}
	return name, c, nil
}

func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	}
	return fmt.Sprint(v)
}

func unionKeys[V any](a, b map[string]V) []string {
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

// diffValue appends the paths under at where a and b differ: maps key by key, lists of
// equal length element by element, lists of different length as one path.
func diffValue(paths []string, at string, a, b any) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		for _, k := range unionKeys(am, bm) {
			paths = diffValue(paths, at+"."+strings.ReplaceAll(k, ".", `\.`), am[k], bm[k])
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

// equalScalar compares decoded scalars: numbers by value, and a string that spells a number
// or a boolean equal to it.
func equalScalar(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	as, aok := scalarText(a)
	bs, bok := scalarText(b)
	return aok && bok && as == bs
}

// scalarText is the canonical text of a number, a boolean, or a string spelling one.
func scalarText(v any) (string, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64), err == nil
	case bool:
		return strconv.FormatBool(t), true
	case string:
		s := strings.TrimSpace(t)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64), true
		}
		if b, err := strconv.ParseBool(s); err == nil {
			return strconv.FormatBool(b), true
		}
	}
	return "", false
}
