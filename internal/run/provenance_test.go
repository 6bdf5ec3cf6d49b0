package run

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/decisionlog"
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

// fullDisk fails every write, as a disk that filled up.
type fullDisk struct{ writes int }

func (w *fullDisk) Write([]byte) (int, error) {
	w.writes++
	return 0, errors.New("no space left on device")
}

// A write error stops the decision log, which then refuses every entry: each lost entry is
// counted, the stop is a gauge, and it is logged once, not once a pass.
func TestDecisionLogStoppedByAWriteErrorIsCountedAndLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	disk := &fullDisk{}
	m := NewMetrics()
	c := &controller{e: &Engine{opts: Options{DecisionLog: decisionlog.NewWriter(disk, decisionlog.Options{}), Metrics: m}},
		cfg: crdConfig{log: slog.New(slog.NewTextHandler(&logs, nil))}}
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "App",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "generation": int64(1), "resourceVersion": "7"}}}
	for range 3 {
		c.logDecision(input{key: "ns/a", cr: cr, trigger: TriggerUpdate},
			decision{success: true, rec: passRecord{id: "01M96PQPFR60RK4CSM6MV3EE1S", trigger: TriggerUpdate, called: true}}, passSteps{})
	}
	if disk.writes != 1 {
		t.Errorf("%d writes to the log, want 1: a stopped log writes no more", disk.writes)
	}
	if got := testutil.ToFloat64(m.DecisionLogFailures); got != 3 {
		t.Errorf("ork_decision_log_append_failures_total = %v, want 3", got)
	}
	if got := testutil.ToFloat64(m.DecisionLogStopped); got != 1 {
		t.Errorf("ork_decision_log_stopped = %v, want 1", got)
	}
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 || !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("%d error lines, want one naming the write error:\n%s", n, logs.String())
	}
}
