package target

import (
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
)

func TestResolve(t *testing.T) {
	cr := map[string]any{
		"metadata": map[string]any{"name": "web", "namespace": "team-a"},
		"spec":     map[string]any{"cluster": "eu-1", "none": "", "bad": "EU_1"},
	}
	ref := func(name, ns string) *katalog.Target {
		return &katalog.Target{KubeconfigSecretRef: &katalog.SecretKeyRef{Name: name, Namespace: ns, Key: "kubeconfig"}}
	}
	for _, tc := range []struct {
		name    string
		target  *katalog.Target
		want    Ref
		wantErr string
	}{
		{"no target: local", nil, Ref{}, ""},
		{"literal, ork's namespace", ref("eu-1-kubeconfig", ""), Ref{"ork-system", "eu-1-kubeconfig", "kubeconfig"}, ""},
		{"templated from the CR", ref("{{ .spec.cluster }}-kubeconfig", "clusters"), Ref{"clusters", "eu-1-kubeconfig", "kubeconfig"}, ""},
		{"templated namespace", ref("x", "{{ .metadata.namespace }}"), Ref{"team-a", "x", "kubeconfig"}, ""},
		{"renders empty: local", ref("{{ .spec.none }}", "clusters"), Ref{}, ""},
		{"empty unless set: local", ref("{{ if .spec.none }}{{ .spec.none }}-kubeconfig{{ end }}", ""), Ref{}, ""},
		{"a missing field is an error, not local", ref("{{ .spec.clustr }}-kubeconfig", ""), Ref{}, "clustr"},
		{"renders no name", ref("{{ .spec.bad }}", ""), Ref{}, `target secret name "EU_1"`},
		{"no key", &katalog.Target{KubeconfigSecretRef: &katalog.SecretKeyRef{Name: "x"}}, Ref{}, "key is required"},
		{"no ref", &katalog.Target{}, Ref{}, "kubeconfigSecretRef is required"},
		{"does not parse", ref("{{ .spec.cluster", ""), Ref{}, "parse template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm, err := Compile("remote.target", tc.target, "ork-system")
			var got Ref
			if err == nil {
				got, err = Resolve(tm, cr)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err %v, want one with %q", err, tc.wantErr)
			case got != tc.want:
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRefString(t *testing.T) {
	if s := (Ref{}).String(); s != "local" {
		t.Errorf("local ref: %q", s)
	}
	if s := spokeRef.String(); s != "ork-system/spoke-kubeconfig[kubeconfig]" {
		t.Errorf("ref: %q", s)
	}
}

// A target named in a status reads back as the same Ref; anything else is refused.
func TestParseRef(t *testing.T) {
	if got, err := ParseRef(spokeRef.String()); err != nil || got != spokeRef {
		t.Errorf("ParseRef(%q) = %+v, %v; want %+v", spokeRef.String(), got, err, spokeRef)
	}
	for _, s := range []string{"local", "", "ns/name", "ns/name[]", "name[key]", "ns/Name[key]", "ns/a/b[key]", "ns/name[k/ey]"} {
		if got, err := ParseRef(s); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", s, got)
		}
	}
}
