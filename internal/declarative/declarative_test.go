package declarative

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/naming"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/resources"
)

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", name), got)
}

// loadCRD decodes a one-CRD Katalog held in memory and fails the test on any error finding.
func loadCRD(t *testing.T, path, text string) *katalog.CRD {
	t.Helper()
	set, findings := katalog.Decode(katalog.Source{Path: path, Data: []byte(text)})
	if katalog.HasErrors(findings) {
		t.Fatalf("katalog findings: %v", findings)
	}
	if len(set.CRDs) != 1 {
		t.Fatalf("want one CRD, got %d", len(set.CRDs))
	}
	return set.CRDs[0]
}

func readCR(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cr map[string]any
	if err := sigsyaml.Unmarshal(data, &cr); err != nil {
		t.Fatal(err)
	}
	return cr
}

// planYAML shows a plan the way a reviewer reads it.
func planYAML(t *testing.T, p Plan) []byte {
	t.Helper()
	objs := func(os []resources.Object) []map[string]any {
		out := []map[string]any{}
		for _, o := range os {
			out = append(out, o.Obj.Object)
		}
		return out
	}
	b, err := sigsyaml.Marshal(map[string]any{
		"createIfMissing": objs(p.CreateIfMissing), "apply": objs(p.Apply), "delete": objs(p.Delete),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDesiredWebsiteExample(t *testing.T) {
	set, _, err := katalog.Load([]string{"../../examples/website/katalog.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	c := set.CRD("website")
	p, err := Desired(c, readCR(t, "../../examples/website/cr.yaml"), resources.Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "website.golden", planYAML(t, p))
}

const sections = `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
spec:
  crds:
    app:
      apiTypes: {group: example.com, version: v1, kind: App, plural: apps}
      operatorBox:
        onCreate:
          services:
            - name: "{{ .metadata.name }}"
              port: 80
          deployments:
            - name: "{{ .metadata.name }}"
              image: "{{ .spec.image }}"
              env:
                MODE: "{{ .spec.mode | upper }}"
        onReconcile:
          configMaps:
            - name: "{{ .metadata.name }}-settings"
              data: { replicas: "{{ .spec.replicas }}" }
        onDelete:
          jobs:
            - name: "{{ .metadata.name }}-cleanup"
              image: busybox
`

func appCR() map[string]any {
	return map[string]any{
		"apiVersion": "example.com/v1", "kind": "App",
		"metadata": map[string]any{"name": "shop", "namespace": "prod"},
		"spec":     map[string]any{"image": "shop:2", "mode": "fast", "replicas": int64(3)},
	}
}

func TestDesiredSortsSectionsAndKeepsWrittenOrder(t *testing.T) {
	c := loadCRD(t, "k.yaml", sections)
	p, err := Desired(c, appCR(), resources.Options{})
	if err != nil {
		t.Fatal(err)
	}
	refs := func(os []resources.Object) []string {
		var out []string
		for _, o := range os {
			out = append(out, o.Type.Type+"/"+o.Obj.GetNamespace()+"/"+o.Obj.GetName())
		}
		return out
	}
	got := map[string][]string{"create": refs(p.CreateIfMissing), "apply": refs(p.Apply), "delete": refs(p.Delete)}
	want := map[string][]string{
		"create": {"service/prod/shop", "deployment/prod/shop"},
		"apply":  {"configmap/prod/shop-settings"},
		"delete": {"job/prod/shop-cleanup"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("plan (-want +got):\n%s", d)
	}
	if data := p.Apply[0].Obj.Object["data"]; !cmp.Equal(data, map[string]any{"replicas": "3"}) {
		t.Errorf("configmap data = %v, want replicas \"3\" (a number rendered into a string field)", data)
	}
	sel := p.CreateIfMissing[0].Obj.Object["spec"].(map[string]any)["selector"]
	if !cmp.Equal(sel, map[string]any{naming.InstanceLabel: "shop"}) {
		t.Errorf("service selector = %v, want the CR's instance label", sel)
	}
}

func TestDesiredOptionsOverrideTheCR(t *testing.T) {
	c := loadCRD(t, "k.yaml", sections)
	p, err := Desired(c, appCR(), resources.Options{Namespace: "elsewhere", SelectorLabels: map[string]string{"x": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	svc := p.CreateIfMissing[0].Obj
	if svc.GetNamespace() != "elsewhere" {
		t.Errorf("namespace = %q, want elsewhere", svc.GetNamespace())
	}
	if sel := svc.Object["spec"].(map[string]any)["selector"]; !cmp.Equal(sel, map[string]any{"x": "y"}) {
		t.Errorf("selector = %v, want x=y", sel)
	}
}

func TestDesiredErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, from, to string
		want           []string
	}{
		{"missing key in a template",
			`image: "{{ .spec.image }}"`, `image: "{{ .spec.imag }}"`,
			[]string{"k.yaml:14: crds.app.operatorBox.onCreate.deployments[0].image:", `template reads .spec.imag, which the custom resource lacks`}},
		{"missing key in a nested template",
			`MODE: "{{ .spec.mode | upper }}"`, `MODE: "{{ .spec.nope }}"`,
			[]string{"k.yaml:16: crds.app.operatorBox.onCreate.deployments[0].env.MODE:", `"nope"`}},
		{"template parse error",
			`port: 80`, `port: "{{ .spec.port "`,
			[]string{"k.yaml:11: crds.app.operatorBox.onCreate.services[0].port:", "parse template"}},
		{"built field of the wrong type",
			`port: 80`, `port: "{{ .spec.mode }}"`,
			[]string{`k.yaml:11: crds.app.operatorBox.onCreate.services[0] (service): field "port": expected an integer, got string "fast"`}},
		{"unknown field",
			`port: 80`, `prot: 80`,
			[]string{`k.yaml:11: crds.app.operatorBox.onCreate.services[0] (service): field "prot": unknown field (did you mean "port"?)`}},
		{"missing required field in onDelete",
			`image: busybox`, `command: [rm]`,
			[]string{`k.yaml:23: crds.app.operatorBox.onDelete.jobs[0] (job): field "image": required`}},
		{"unknown block",
			`configMaps:`, `configmap:`,
			[]string{`k.yaml:18: crds.app.operatorBox.onReconcile.configmap: unknown resource block "configmap" (did you mean "configMaps"?)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(sections, tt.from, tt.to, 1)
			if text == sections {
				t.Fatalf("%q not in the Katalog", tt.from)
			}
			_, err := Desired(loadCRD(t, "k.yaml", text), appCR(), resources.Options{})
			if err == nil {
				t.Fatal("Desired succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}
