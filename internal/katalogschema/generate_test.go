package katalogschema

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/schema"
)

const (
	docsFile   = "../../docs/katalog.md"
	schemaFile = "../../schema/katalog.schema.json"
)

func readDocs(t *testing.T) []byte {
	t.Helper()
	docs, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// schema/katalog.schema.json is generated: it changes with the Go types, docs/katalog.md,
// the intent schema and constraints.go, never by hand. go test ./internal/katalogschema
// -update rewrites it.
func TestSchemaFileIsUpToDate(t *testing.T) {
	got, err := Generate(readDocs(t), schema.RemoteReconcileResult())
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Assert(t, schemaFile, got)
}

// The generator refuses docs that have drifted from the Go types.
func TestGenerateRefusesDocsThatDriftFromTheTypes(t *testing.T) {
	docs := string(readDocs(t))
	const workers = "| `workers` | int, 1–64 | `4` |"
	if !strings.Contains(docs, workers) {
		t.Fatalf("docs/katalog.md no longer has the row %q this test edits", workers)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"a field without a row", workers, "| `retired` | int | `4` |",
			"spec.crds.*.operatorBox.reconcile.workers (Go type int) has no row"},
		{"a row without a field", workers, workers + " x |\n| `workerz` | int | `4` |",
			"documents spec.crds.*.operatorBox.reconcile.workerz, which the Katalog types do not have"},
		{"a type column that does not fit", workers, "| `workers` | bool | `4` |",
			`says spec.crds.*.operatorBox.reconcile.workers is "bool", but its Go type is int`},
		{"a template where no string is", workers, "| `workers` | int or template | `4` |",
			"allows a template in spec.crds.*.operatorBox.reconcile.workers, which is no string"},
		{"a field documented twice", workers, workers + " x |\n" + workers,
			"documents spec.crds.*.operatorBox.reconcile.workers again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate([]byte(strings.Replace(docs, tc.old, tc.new, 1)), schema.RemoteReconcileResult())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// Descriptions, defaults and required fields come from the docs' rows, templates are allowed
// where the docs say so.
func TestSchemaCarriesTheDocs(t *testing.T) {
	out, err := Generate(readDocs(t), schema.RemoteReconcileResult())
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(out, &root); err != nil {
		t.Fatal(err)
	}
	crd := dig(t, root, "properties", "spec", "properties", "crds", "additionalProperties")
	reconcile := dig(t, crd, "properties", "operatorBox", "properties", "reconcile")
	remote := dig(t, reconcile, "properties", "remote")
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"workers' description, word for word", dig(t, reconcile, "properties", "workers")["description"],
			"reconciles of this CRD that run at once (one key is never reconciled twice at the same time)"},
		{"a link becomes its text", reconcile["description"], "which reconciler, and how"},
		{"workers' default", dig(t, reconcile, "properties", "workers")["default"], 4.0},
		{"timeout's default", dig(t, remote, "properties", "timeout")["default"], "30s"},
		{"namespaced's default", dig(t, crd, "properties", "namespaced")["default"], true},
		{"remote requires endpoint", fmt.Sprint(remote["required"]), "[endpoint]"},
		{"a required string is not empty", dig(t, remote, "properties", "endpoint")["minLength"], 1.0},
		{"an optional field may be null", fmt.Sprint(dig(t, reconcile, "properties", "resync")["type"]), "[string null]"},
		{"the endpoint may be a template", fmt.Sprint(dig(t, remote, "properties", "endpoint")["anyOf"]),
			"[map[$ref:#/$defs/template] map[pattern:" + httpURL + "]]"},
		{"unknown fields are refused", crd["additionalProperties"], false},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}

// dig walks down nested JSON objects by key.
func dig(t *testing.T, m map[string]any, keys ...string) map[string]any {
	t.Helper()
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("no object at %s", strings.Join(keys, "."))
		}
		m = next
	}
	return m
}
