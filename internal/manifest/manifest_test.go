package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReadRejectsNonObjects(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"no-kind.yaml":  "apiVersion: v1\nmetadata: {name: x}\n",
		"scalar.yaml":   "just text\n",
		"no-name.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
		"second.yaml":   "# comment only\n---\napiVersion: v1\nkind: ConfigMap\n",
		"list-ok.yaml":  "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
		"empty-ok.yaml": "---\n# nothing\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		objs, err := Read(path)
		switch {
		case strings.HasSuffix(name, "-ok.yaml") && err != nil:
			t.Errorf("%s: %v", name, err)
		case name == "list-ok.yaml" && (len(objs) != 1 || objs[0].GetName() != "a"):
			t.Errorf("%s: objects = %v, want the list's one item", name, objs)
		case !strings.HasSuffix(name, "-ok.yaml") && err == nil:
			t.Errorf("%s: read %d objects, want an error", name, len(objs))
		case name == "second.yaml" && !strings.Contains(err.Error(), "document 2"):
			t.Errorf("%s: error %q does not name document 2", name, err)
		}
	}
}

func TestSecretsStandInForTheCluster(t *testing.T) {
	objs, err := Read("../../examples/remote/secret.yaml")
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "anywhere"}, "data": map[string]any{"k": "dmFsdWU=", "bad": "%%"}}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm"}, "data": map[string]any{"k": "v"}}
	objs = append(objs, &unstructured.Unstructured{Object: extra}, &unstructured.Unstructured{Object: cm})
	s := NewSecrets("the CR file or --secrets", objs...)
	tests := []struct {
		ns, name, key string
		want, err     string
	}{
		{"default", "my-reconciler-token", "token", "demo-token-change-me", ""},
		{"other", "my-reconciler-token", "token", "", "no Secret other/my-reconciler-token in the CR file or --secrets"},
		{"any", "anywhere", "k", "value", ""},
		{"any", "anywhere", "bad", "", "data.bad is not base64"},
		{"any", "anywhere", "nope", "", `has no key "nope"`},
		{"default", "cm", "k", "", "no Secret default/cm"},
	}
	for _, tt := range tests {
		got, err := s.SecretValue(t.Context(), tt.ns, tt.name, tt.key)
		switch {
		case tt.err == "" && (err != nil || string(got) != tt.want):
			t.Errorf("%s/%s %s: %q, %v; want %q", tt.ns, tt.name, tt.key, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s/%s %s: %v, want an error containing %q", tt.ns, tt.name, tt.key, err, tt.err)
		}
	}
}

func TestAsServedFillsWhatTheServerAssigns(t *testing.T) {
	in := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp",
		"metadata": map[string]any{"name": "my-webapp"}}}
	a, b := AsServed(in, true), AsServed(in, true)
	if a.GetNamespace() != "default" || a.GetGeneration() != 1 || a.GetResourceVersion() != "1" || len(a.GetUID()) != 36 {
		t.Errorf("got ns %q gen %d rv %q uid %q", a.GetNamespace(), a.GetGeneration(), a.GetResourceVersion(), a.GetUID())
	}
	if a.GetUID() != b.GetUID() || in.GetNamespace() != "" {
		t.Errorf("uid %q then %q (want stable); input namespace %q (want untouched)", a.GetUID(), b.GetUID(), in.GetNamespace())
	}
	if c := AsServed(in, false); c.GetNamespace() != "" || c.GetUID() == a.GetUID() {
		t.Errorf("cluster-scoped: ns %q uid %q", c.GetNamespace(), c.GetUID())
	}
}
