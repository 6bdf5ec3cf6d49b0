package decision

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestFieldPaths(t *testing.T) {
	deploy := func(image string, replicas int64) map[string]any {
		return map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "resourceVersion": "1", "uid": "u", "generation": int64(1),
				"managedFields": []any{map[string]any{"manager": "orkestra"}},
				"labels":        map[string]any{"app.kubernetes.io/name": "web"}},
			"spec": map[string]any{"replicas": replicas, "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "app", "image": image}}}}},
			"status": map[string]any{"readyReplicas": int64(1)},
		}
	}
	tests := []struct {
		name          string
		before, after map[string]any
		want          []string
	}{
		{"nothing changed", deploy("nginx:1", 2), deploy("nginx:1", 2), nil},
		{"an image", deploy("nginx:1", 2), deploy("nginx:2", 2), []string{"spec.template.spec.containers[0].image"}},
		{"replicas and image", deploy("nginx:1", 2), deploy("nginx:2", 3),
			[]string{"spec.replicas", "spec.template.spec.containers[0].image"}},
		{"bookkeeping and status are ignored", deploy("nginx:1", 2), func() map[string]any {
			d := deploy("nginx:1", 2)
			md := d["metadata"].(map[string]any)
			md["resourceVersion"], md["uid"], md["generation"], md["creationTimestamp"] = "2", "v", int64(2), "2026-01-01T00:00:00Z"
			md["managedFields"] = []any{}
			md["annotations"] = map[string]any{Annotation: "01J"}
			d["status"] = map[string]any{"readyReplicas": int64(2)}
			return d
		}(), nil},
		{"a created object lists its leaves", nil, map[string]any{"kind": "ConfigMap", "data": map[string]any{"a.b": "1"}, "metadata": map[string]any{"labels": map[string]any{}}},
			[]string{"data.a\\.b", "kind", "metadata.labels"}},
		{"a deleted object lists its leaves", map[string]any{"data": map[string]any{"k": "v"}}, nil, []string{"data.k"}},
		{"a container added", deploy("nginx:1", 2), func() map[string]any {
			d := deploy("nginx:1", 2)
			spec := d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "side", "image": "envoy"})
			return d
		}(), []string{"spec.template.spec.containers[1].image", "spec.template.spec.containers[1].name"}},
		{"a scalar became a map", map[string]any{"x": "1"}, map[string]any{"x": map[string]any{"y": "2"}}, []string{"x", "x.y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FieldPaths(tt.before, tt.after); !slices.Equal(got, tt.want) {
				t.Errorf("FieldPaths = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		in   string
		want Path
		bad  bool
	}{
		{in: "spec.replicas", want: Path{{Key: "spec"}, {Key: "replicas"}}},
		{in: "spec.template.spec.containers[0].image", want: Path{{Key: "spec"}, {Key: "template"}, {Key: "spec"}, {Key: "containers"}, {Index: 0, IsIndex: true}, {Key: "image"}}},
		{in: `metadata.labels.app\.kubernetes\.io/name`, want: Path{{Key: "metadata"}, {Key: "labels"}, {Key: "app.kubernetes.io/name"}}},
		{in: "a[1][2]", want: Path{{Key: "a"}, {Index: 1, IsIndex: true}, {Index: 2, IsIndex: true}}},
		{in: "", bad: true},
		{in: "a..b", bad: true},
		{in: ".a", bad: true},
		{in: "a.", bad: true},
		{in: "[0]", bad: true},
		{in: "a[x]", bad: true},
		{in: "a[0", bad: true},
		{in: "a[0]b", bad: true},
		{in: "a]", bad: true},
		{in: `a\`, bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePath(tt.in)
			if tt.bad {
				if err == nil {
					t.Errorf("ParsePath(%q) = %v, want an error", tt.in, got)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ParsePath(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if s := got.String(); s != tt.in {
				t.Errorf("String() = %q, want %q", s, tt.in)
			}
		})
	}
}

func TestFieldsJSON(t *testing.T) {
	f := ChangedFields(map[string]any{"a": "1"}, map[string]any{"a": "2"})
	b, err := json.Marshal(f)
	if err != nil || string(b) != `["a"]` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back Fields
	if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back.Paths(), []string{"a"}) {
		t.Errorf("Unmarshal = %v, %v", back.Paths(), err)
	}
	if err := json.Unmarshal([]byte(`["a..b"]`), &back); err == nil {
		t.Errorf("Unmarshal accepts a malformed path")
	}
	if b, _ := json.Marshal(Fields{}); string(b) != "[]" {
		t.Errorf("empty Fields marshal to %s", b)
	}
}
