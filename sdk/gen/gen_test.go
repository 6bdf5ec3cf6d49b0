package gen

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/orkspace/ork/schema"
)

var update = flag.Bool("update", false, "rewrite the generated SDK files")

// The committed SDK types are what the schemas give today: a schema change without `go
// generate ./sdk/...` fails here.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file  string
		write func(*Model) ([]byte, error)
	}{
		{"../go/reconciler/wire_gen.go", Go},
		{"../python/ork_reconciler/_wire.py", Python},
		{"../ts/src/wire.gen.ts", TypeScript},
	} {
		want, err := tc.write(m)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(tc.file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./sdk/... (or go test ./sdk/gen -update)", tc.file)
		}
	}
}

func TestGenerationIsDeterministic(t *testing.T) {
	for range 3 {
		a, b := mustGen(t, schema.RemoteReconcileResult()), mustGen(t, schema.RemoteReconcileResult())
		if !bytes.Equal(a, b) {
			t.Fatal("two generations differ")
		}
	}
}

func mustGen(t *testing.T, result []byte) []byte {
	t.Helper()
	m, err := Build(schema.PreparedRequest(), result)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Go(m)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Python(m)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := TypeScript(m)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(g, p...), ts...)
}

// A change of the wire schema reaches both languages' types.
func TestSchemaChangesReachTheTypes(t *testing.T) {
	base := string(schema.RemoteReconcileResult())
	for _, tc := range []struct {
		name      string
		old, new  string
		want, not []string
	}{
		{"renamed field", `"serviceName"`, `"backendName"`,
			[]string{"BackendName string `json:\"backendName\"`", "backend_name: str,", "backendName: string;"},
			[]string{"ServiceName", "service_name"}},
		{"new intent type", `"job",`, `"job",
            "networkpolicy",`,
			nil, nil}, // no $defs/networkpolicyFields: Build fails, checked below
		{"new enum value", `"NodePort",`, `"NodePort", "ExternalName",`,
			[]string{`ServiceTypeExternalName ServiceType = "ExternalName"`, `"ExternalName"`, `"NodePort" | "ExternalName" | "LoadBalancer";`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := strings.ReplaceAll(base, tc.old, tc.new)
			if changed == base {
				t.Fatalf("%s is not in the schema", tc.old)
			}
			m, err := Build(schema.PreparedRequest(), []byte(changed))
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), "networkpolicyFields") {
					t.Errorf("Build = %v, want an error naming the missing fields", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, _ := Go(m)
			p, _ := Python(m)
			ts, _ := TypeScript(m)
			out := string(g) + string(p) + string(ts)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("output still has %q", n)
				}
			}
		})
	}
}

// The schemas' $id carries the contract version ork sends: a schema whose $id disagrees
// makes no SDK.
func TestSchemaIDCarriesTheContractVersion(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if m.ContractVersion == "" {
		t.Fatal("no contract version")
	}
	other := strings.Replace(string(schema.RemoteReconcileResult()), "?contract="+m.ContractVersion+`"`, `?contract=99"`, 1)
	if other == string(schema.RemoteReconcileResult()) {
		t.Fatalf("the result schema's $id carries no ?contract=%s", m.ContractVersion)
	}
	if _, err := Build(schema.PreparedRequest(), []byte(other)); err == nil || !strings.Contains(err.Error(), `carries contract version "99"`) {
		t.Errorf("Build = %v, want an error naming the $id's contract version", err)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ json, goName, snake string }{
		{"apiVersion", "APIVersion", "api_version"},
		{"statefulset", "StatefulSet", "statefulset"},
		{"persistentvolumeclaim", "PersistentVolumeClaim", "persistentvolumeclaim"},
		{"gvk", "GVK", "gvk"},
		{"targetPort", "TargetPort", "target_port"},
		{"ok", "OK", "ok"},
		{"ClusterIP", "ClusterIP", "cluster_ip"},
		{"x-mode", "XMode", "x_mode"},
		{"app.kubernetes.io/name", "AppKubernetesIoName", "app_kubernetes_io_name"},
		{"2fa", "X2fa", "2fa"},
	} {
		if g, s := GoName(tc.json), snakeName(tc.json); g != tc.goName || s != tc.snake {
			t.Errorf("%s: %s %s, want %s %s", tc.json, g, s, tc.goName, tc.snake)
		}
	}
}
