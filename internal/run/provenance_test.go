package run

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/exchange"
)

// The inputs digest of status.lastDecision is public: with --redact, it is the digest of the
// masked values, as a recording shows them, so that a short secret cannot be found by hashing
// guesses; what no path masks still changes it, and the cached object keeps its values.
func TestDecisionInputsDigestMasksTheRedactPaths(t *testing.T) {
	redact, err := exchange.ParseRedact([]string{"spec.password", "metadata.annotations.token", "apiKey"})
	if err != nil {
		t.Fatal(err)
	}
	cr := func(password, token string, size int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "App",
			"metadata": map[string]any{"name": "a", "namespace": "ns", "generation": int64(2), "annotations": map[string]any{"token": token, "team": "x"}},
			"spec":     map[string]any{"password": password, "size": size}}}
		return u
	}
	args := func(key string) map[string]any { return map[string]any{"apiKey": key, "tier": "gold"} }
	rec := passRecord{id: "01M96PQPFR60RK4CSM6MV3EE1S", redact: redact, args: args("k-1")}

	first := cr("hunter2", "t0k3n", 1)
	got := rec.inputs(first)
	want, err := prov.InputsDigest(prov.InputsOf(cr(exchange.Redacted, exchange.Redacted, 1), args(exchange.Redacted), nil))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("inputs digest %s, want %s: the digest of the masked values", got, want)
	}
	other := passRecord{id: rec.id, redact: redact, args: args("k-2")}
	if d := other.inputs(cr("letmein", "0th3r", 1)); d != got {
		t.Errorf("inputs digest %s with other redacted values, want the same %s", d, got)
	}
	if d := rec.inputs(cr("hunter2", "t0k3n", 2)); d == got {
		t.Errorf("inputs digest unchanged by spec.size, which no path masks")
	}
	if spec := first.Object["spec"].(map[string]any); spec["password"] != "hunter2" {
		t.Errorf("the digest changed the cached object: spec %v", spec)
	}
	if a := rec.args.(map[string]any); a["apiKey"] != "k-1" {
		t.Errorf("the digest changed the rendered args: %v", a)
	}
}
