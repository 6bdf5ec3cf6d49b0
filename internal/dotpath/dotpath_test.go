package dotpath

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Path
		wantErr bool
	}{
		{in: "metadata.managedFields", want: Path{"metadata", "managedFields"}},
		{in: `metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`,
			want: Path{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}},
		{in: "status", want: Path{"status"}},
		{in: "", wantErr: true},
		{in: "metadata..name", wantErr: true},
		{in: ".metadata", wantErr: true},
		{in: "metadata.", wantErr: true},
		{in: "spec.containers[0]", wantErr: true},
		{in: "spec.*", wantErr: true},
		{in: `spec\`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("Parse(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" && !tt.wantErr {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}

func TestWithoutCopiesAndIgnoresMissing(t *testing.T) {
	obj := map[string]any{
		"metadata": map[string]any{"name": "a", "managedFields": []any{map[string]any{"manager": "x"}},
			"annotations": map[string]any{"k": "v"}},
		"spec": map[string]any{"replicas": int64(2)},
	}
	paths := []Path{{"metadata", "managedFields"}, {"metadata", "annotations"}, {"spec", "nope", "deeper"}, {"status"}}
	got := Without(obj, paths)
	want := map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"replicas": int64(2)}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Without (-want +got):\n%s", d)
	}
	if _, ok := obj["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Fatal("Without modified its input")
	}
}
