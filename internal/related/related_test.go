package related

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/katalog"
)

func cr(ns, name string, spec map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"namespace": ns, "name": name}, "spec": spec}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		entry   katalog.Related
		cluster bool
		want    string // Ref.String(), or the error's text when it starts with "error: "
	}{
		{"templated name in the CR's namespace", katalog.Related{As: "cfg", Name: "{{ .metadata.name }}-cfg"}, false, "team-a/web-cfg"},
		{"constant name", katalog.Related{As: "cfg", Name: "shared"}, false, "team-a/shared"},
		{"selector values rendered", katalog.Related{As: "pods", Selector: &katalog.RelatedSelector{MatchLabels: map[string]string{"app": "{{ .metadata.name }}"}}}, false, "team-a/selector app=web"},
		{"other namespace refused", katalog.Related{As: "cfg", Name: "x", Namespace: "team-b"}, false, "error: allowCrossNamespace is false"},
		{"other namespace allowed", katalog.Related{As: "cfg", Name: "x", Namespace: "team-b", AllowCrossNamespace: true}, false, "team-b/x"},
		{"cluster-scoped kind takes no namespace", katalog.Related{As: "tier", Name: "{{ .spec.tier }}", Namespace: "ignored"}, true, "gold"},
		{"a rendered name that is no name", katalog.Related{As: "cfg", Name: "{{ .spec.tier }}_X"}, false, "error: name \"gold_X\""},
		{"a field the CR lacks", katalog.Related{As: "cfg", Name: "{{ .spec.nothing }}"}, false, "error: related cfg: name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Compile("payload.related[0]", tt.entry)
			if err != nil {
				t.Fatal(err)
			}
			e.Namespaced = !tt.cluster
			ref, err := e.Resolve(cr("team-a", "web", map[string]any{"tier": "gold"}))
			if want, isErr := strings.CutPrefix(tt.want, "error: "); isErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("Resolve = %v, %v; want an error containing %q", ref, err, want)
				}
				return
			}
			if err != nil || ref.String() != tt.want {
				t.Fatalf("Resolve = %q, %v; want %q", ref.String(), err, tt.want)
			}
		})
	}
}

func TestCompileNeedsNameOrSelector(t *testing.T) {
	for _, r := range []katalog.Related{{As: "x"}, {As: "x", Name: "a", Selector: &katalog.RelatedSelector{}}} {
		if _, err := Compile("r", r); err == nil {
			t.Errorf("Compile(%+v) = nil error, want one: exactly one of name and selector", r)
		}
	}
}

func TestIndexAffected(t *testing.T) {
	cms := schema.GroupResource{Resource: "configmaps"}
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	ix := NewIndex()
	ix.Set("ns/a", []Target{{Resource: cms, Ref: Ref{Namespace: "ns", Name: "shared"}}})
	ix.Set("ns/b", []Target{{Resource: cms, Ref: Ref{Namespace: "ns", Name: "shared"}, WatchStatus: true}, {Resource: cms, Ref: Ref{Namespace: "ns", Selector: sel}}})
	ix.Set("other/c", []Target{{Resource: cms, Ref: Ref{Namespace: "other", Name: "shared"}}})

	check := func(what string, ch Change, want ...string) {
		t.Helper()
		if got := ix.Affected(ch); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: Affected = %v, want %v", what, got, want)
		}
	}
	check("by name", Change{Resource: cms, Namespace: "ns", Name: "shared"}, "ns/a", "ns/b")
	check("status only: only watchStatus", Change{Resource: cms, Namespace: "ns", Name: "shared", StatusOnly: true}, "ns/b")
	check("another type", Change{Resource: schema.GroupResource{Resource: "secrets"}, Namespace: "ns", Name: "shared"})
	check("selector matches the new labels", Change{Resource: cms, Namespace: "ns", Name: "x", New: labels.Set{"app": "web"}}, "ns/b")
	check("selector matched the old labels", Change{Resource: cms, Namespace: "ns", Name: "x", Old: labels.Set{"app": "web"}, New: labels.Set{}}, "ns/b")
	check("selector does not match", Change{Resource: cms, Namespace: "ns", Name: "x", New: labels.Set{"app": "db"}})

	ix.Set("ns/a", []Target{{Resource: cms, Ref: Ref{Namespace: "ns", Name: "mine"}}})
	check("a new pass replaces the references", Change{Resource: cms, Namespace: "ns", Name: "shared"}, "ns/b")
	ix.Drop("ns/b")
	check("a deleted CR is forgotten", Change{Resource: cms, Namespace: "ns", Name: "shared"})
	if len(ix.byName) != 2 || len(ix.bySpace) != 0 {
		t.Errorf("after Drop the index keeps %d names and %d spaces, want 2 and 0", len(ix.byName), len(ix.bySpace))
	}
}

func TestFromObjects(t *testing.T) {
	obj := func(apiVersion, kind, ns, name string, lbls map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"namespace": ns, "name": name, "labels": lbls}, "data": map[string]any{"k": "v"}}}
	}
	objs := []*unstructured.Unstructured{
		obj("v1", "ConfigMap", "team-a", "web-config", nil),
		obj("v1", "ConfigMap", "team-b", "web-config", nil),
		obj("v1", "Pod", "team-a", "p2", map[string]any{"app": "web"}),
		obj("v1", "Pod", "team-a", "p1", map[string]any{"app": "web"}),
		obj("v1", "Pod", "team-a", "p3", map[string]any{"app": "db"}),
		obj("v1", "Secret", "team-a", "creds", nil),
	}
	entries := []katalog.Related{
		{As: "config", Kind: "ConfigMap", Name: "{{ .metadata.name }}-config"},
		{As: "pods", Plural: "pods", Selector: &katalog.RelatedSelector{MatchLabels: map[string]string{"app": "{{ .metadata.name }}"}}},
		{As: "creds", Kind: "Secret", Name: "creds"},
		{As: "absent", Kind: "ConfigMap", Name: "nothing", Required: true},
	}
	got, err := FromObjects(entries, nil, cr("team-a", "web", nil), objs)
	if err != nil {
		t.Fatal(err)
	}
	names := func(as string) (out []string) {
		for _, o := range got.Related[as] {
			out = append(out, o["metadata"].(map[string]any)["name"].(string))
		}
		return out
	}
	if n := strings.Join(names("config"), ","); n != "web-config" || got.Related["config"][0]["metadata"].(map[string]any)["namespace"] != "team-a" {
		t.Errorf("config = %v, want team-a's web-config", got.Related["config"])
	}
	if n := strings.Join(names("pods"), ","); n != "p1,p2" {
		t.Errorf("pods = %s, want p1,p2 (sorted, p3 does not match)", n)
	}
	if _, has := got.Related["creds"][0]["data"]; has {
		t.Error("a Secret's data is kept without allowSecrets")
	}
	if got.Related["absent"] == nil || len(got.Related["absent"]) != 0 {
		t.Errorf("absent = %#v, want an empty list", got.Related["absent"])
	}
	if strings.Join(got.Missing, ";") != "absent: configmaps team-a/nothing" {
		t.Errorf("Missing = %v", got.Missing)
	}
}

// A reference outside --watch-namespace is refused, naming the namespace: ork would never
// see its changes.
func TestResolveRefusesANamespaceOutsideTheWatched(t *testing.T) {
	e, err := Compile("payload.related[0]", katalog.Related{As: "cfg", Name: "x", Namespace: "{{ .spec.tier }}", AllowCrossNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Namespaced, e.WatchNamespaces = true, []string{"team-a", "silver"}
	if ref, err := e.Resolve(cr("team-a", "web", map[string]any{"tier": "gold"})); err == nil || !strings.Contains(err.Error(), `"gold"`) {
		t.Fatalf("Resolve = %v, %v; want an error naming namespace \"gold\"", ref, err)
	}
	if ref, err := e.Resolve(cr("team-a", "web", map[string]any{"tier": "silver"})); err != nil || ref.String() != "silver/x" {
		t.Fatalf("Resolve = %v, %v; want silver/x", ref, err)
	}
}
