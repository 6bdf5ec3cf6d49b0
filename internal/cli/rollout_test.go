package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/rollout"
)

const rolloutKatalog = `apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: k}
spec:
  crds:
    webapp:
      apiTypes: {group: myorg.io, version: v1, kind: WebApp, plural: webapps}
      operatorBox:
        reconcile:
          default: false
          remote:
            endpoint: "http://127.0.0.1:1/reconcile"
            managedResources: [{group: apps, plural: deployments}]
            candidate:
              endpoint: "http://127.0.0.1:2/reconcile"
              mode: canary
              canary: {steps: [10, 50, 100], interval: 1m}
              gate: {maxErrorRatio: 0.1, maxDivergenceRatio: 0.2, minSamples: 4}
`

// apiserverWith serves one ConfigMap (none when cm is nil) at its path, as the apiserver
// would, and writes a kubeconfig pointing at it.
func apiserverWith(t *testing.T, cm *corev1.ConfigMap) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if cm == nil || r.URL.Path != fmt.Sprintf("/api/v1/namespaces/%s/configmaps/%s", cm.Namespace, cm.Name) {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
			return
		}
		_ = json.NewEncoder(w).Encode(cm)
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, srv.URL)
	if err := os.WriteFile(kc, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

func rolloutState(t *testing.T, k string) rollout.State {
	t.Helper()
	set, _, err := katalog.Load([]string{k})
	if err != nil {
		t.Fatal(err)
	}
	p, err := rollout.PlanOf(set.CRDs[0].OperatorBox.Reconcile.Remote.Candidate)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := rollout.State{SpecHash: p.SpecHash, Phase: rollout.Progressing, Step: 1, StepStarted: at,
		Window: rollout.Window{Samples: 8, Errors: 2, Compared: 8, Divergences: 1}}
	s.Record(rollout.Divergence{CR: "default/web", Paths: []string{"objects[apps/v1 Deployment default/web].spec.replicas"}, At: at})
	return s
}

func TestRolloutStatus(t *testing.T) {
	k := filepath.Join(t.TempDir(), "katalog.yaml")
	if err := os.WriteFile(k, []byte(rolloutKatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := rolloutState(t, k).Encode()
	if err != nil {
		t.Fatal(err)
	}
	kc := apiserverWith(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "ops-rollout", Namespace: "ork"}, Data: map[string]string{"webapp": v}})

	code, out, errOut := runOrk(t, "rollout", "status", "-f", k, "--kubeconfig", kc, "--namespace", "ork", "--name", "ops")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden.Assert(t, filepath.Join("testdata", "rollout", "status.golden"), []byte(out))

	code, out, _ = runOrk(t, "rollout", "status", "-f", k, "--crd", "webapp", "--kubeconfig", kc, "--namespace", "ork", "--name", "ops", "-o", "json")
	var st rollout.Status
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	// 2 errors in 8 samples is above maxErrorRatio 0.1: the gate fails.
	if st.Percent != 50 || st.Verdict != "fails" || st.ErrorRatio != 0.25 || st.Divergences != 1 || len(st.Recent) != 1 || st.Promote {
		t.Errorf("json status: %+v", st)
	}

	// No ConfigMap yet: shown, exit 0.
	code, out, errOut = runOrk(t, "rollout", "status", "-f", k, "--kubeconfig", apiserverWith(t, nil), "--namespace", "ork", "--name", "ops")
	if code != 0 || !strings.Contains(out, "no state in ork/ops-rollout yet") {
		t.Errorf("without state: exit %d\n%s%s", code, out, errOut)
	}
}

func TestRolloutStatusWithoutCandidateIsAUsageError(t *testing.T) {
	k := filepath.Join(t.TempDir(), "katalog.yaml")
	doc := rolloutKatalog[:strings.Index(rolloutKatalog, "            candidate:")]
	if err := os.WriteFile(k, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runOrk(t, "rollout", "status", "-f", k, "--kubeconfig", apiserverWith(t, nil))
	if code != 2 || !strings.Contains(errOut, "has no reconcile.remote.candidate") {
		t.Errorf("exit %d, stderr %q; want 2 naming the missing candidate", code, errOut)
	}
}
