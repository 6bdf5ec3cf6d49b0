package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/blame"
	"github.com/orkspace/ork/internal/cli"
	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/decisionlog"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// fromConfig answers a Deployment whose replicas come from the related ConfigMap "config"
// and whose image comes from the spec; the reconciler names its version.
func fromConfig(c call) response {
	var body struct {
		Object struct {
			Spec struct {
				Image string `json:"image"`
			} `json:"spec"`
		} `json:"object"`
		Prepared struct {
			Related map[string][]struct {
				Data map[string]string `json:"data"`
			} `json:"related"`
		} `json:"prepared"`
	}
	if err := json.Unmarshal(c.Raw, &body); err != nil {
		return response{Status: 500, Body: []byte(err.Error())}
	}
	replicas := "1"
	if cfg := body.Prepared.Related["config"]; len(cfg) == 1 && cfg[0].Data["replicas"] != "" {
		replicas = cfg[0].Data["replicas"]
	}
	r := runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{
		map[string]any{"type": "deployment", "fields": map[string]any{"name": c.CRName(), "image": body.Object.Spec.Image,
			"replicas": json.Number(replicas), "port": 8080}},
	}})
	r.Header = map[string]string{decision.ReconcilerVersionHeader: "2.0.0"}
	return r
}

// ork runs `ork` in-process against the test apiserver: its exit code and stdout.
func orkCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, output.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func blameJSON(t *testing.T, ns, field, logPath string) blame.Answer {
	t.Helper()
	code, out, errOut := orkCLI(t, "blame", "deployment/web", "--field", field, "-n", ns, "--decision-log", logPath,
		"--kubeconfig", env.Kubeconfig, "-o", "json")
	if code != 0 {
		t.Fatalf("ork blame --field %s: exit %d: %s", field, code, errOut)
	}
	var a blame.Answer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("ork blame -o json: %v: %s", err, out)
	}
	return a
}

// The acceptance of provenance on the real apiserver: a CR reads a ConfigMap (replicas) and
// a Secret; the ConfigMap's edit, then the spec's, each change one field of the Deployment.
// ork blame names, for spec.replicas, the decision triggered by the ConfigMap at its new
// resourceVersion, and for the image the decision of the spec's generation: two decisions.
// A change by another field manager while ork is stopped is named as the last writer. The
// log holds no value of the Secret, and a flipped byte makes ork audit verify exit 1 naming
// the line.
func TestDecisionLogAndBlame(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, fromConfig)
	payload := `              related:
                - {as: config, kind: ConfigMap, name: "{{ .metadata.name }}-config", required: true}
                - {as: creds, kind: Secret, name: web-creds, allowSecrets: true}
`
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: payload, Managed: []string{"apps/deployments"}})
	const password = "pw-c0ffee-9d2b"
	if _, err := env.Clientset.CoreV1().Secrets(f.NS).Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-creds"},
		StringData: map[string]string{"password": password}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := env.Clientset.CoreV1().ConfigMaps(f.NS)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config"},
		Data: map[string]string{"replicas": "2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(f.Dir, "decisions.log")
	dlog, err := decisionlog.Open(logPath, nil, decisionlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := f.StartStoppable(set, nil, func(o *run.Options) { o.DecisionLog, o.ChildMinInterval = dlog, 100*time.Millisecond })
	f.CreateCR("web", map[string]any{"image": "nginx:1"})
	deployment := func(what string, ok func(*unstructured.Unstructured) bool) {
		t.Helper()
		f.Eventually(what, func() (bool, error) {
			d, err := f.Get(runtest.Deployments, "web")
			return err == nil && ok(d), nil
		})
	}
	replicas := func(d *unstructured.Unstructured) int64 {
		r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		return r
	}
	image := func(d *unstructured.Unstructured) string {
		cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		if len(cs) == 0 {
			return ""
		}
		s, _ := cs[0].(map[string]any)["image"].(string)
		return s
	}
	deployment("the Deployment created with 2 replicas", func(d *unstructured.Unstructured) bool { return replicas(d) == 2 })

	cm, err := cms.Patch(t.Context(), "web-config", types.MergePatchType, []byte(`{"data":{"replicas":"3"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deployment("3 replicas after the ConfigMap's edit", func(d *unstructured.Unstructured) bool { return replicas(d) == 3 })
	f.PatchSpec("web", `{"spec":{"image":"nginx:2"}}`)
	deployment("nginx:2 after the spec's edit", func(d *unstructured.Unstructured) bool { return image(d) == "nginx:2" })
	f.Eventually("the spec's decision in the status", func() (bool, error) {
		d, ok, err := decision.FromStatus(f.GetCR("web"))
		return ok && d.Trigger == "update", err
	})
	stop()
	if err := dlog.Close(); err != nil {
		t.Fatal(err)
	}

	byConfig := blameJSON(t, f.NS, "spec.replicas", logPath)
	if byConfig.Source != blame.SourceLog || byConfig.Trigger != "related" || !byConfig.ByOrk {
		t.Errorf("blame spec.replicas = %+v, want ork's decision from the log, trigger related", byConfig)
	}
	var named bool
	for _, r := range byConfig.Related {
		named = named || r.Name == "config" && r.Ref.Name == "web-config" && r.ResourceVersion == cm.ResourceVersion
	}
	if !named {
		t.Errorf("blame spec.replicas names related %+v, want web-config at resourceVersion %s", byConfig.Related, cm.ResourceVersion)
	}
	if byConfig.Reconciler.Version != "2.0.0" {
		t.Errorf("blame spec.replicas reconciler %+v, want version 2.0.0", byConfig.Reconciler)
	}
	bySpec := blameJSON(t, f.NS, "spec.template.spec.containers[0].image", logPath)
	if bySpec.Trigger != "update" || bySpec.Generation != 2 {
		t.Errorf("blame of the image = %+v, want trigger update at generation 2", bySpec)
	}
	if bySpec.Decision == "" || bySpec.Decision == byConfig.Decision {
		t.Errorf("the two fields name decisions %q and %q, want two different ones", byConfig.Decision, bySpec.Decision)
	}
	if last := lastDecisionOf(t, f.GetCR("web")); last.ID != bySpec.Decision {
		t.Errorf("status.lastDecision %s, want the spec's decision %s", last.ID, bySpec.Decision)
	}

	// A restart over the converged CR writes nothing: the log goes on (its chain continued)
	// with an entry that changed no field, and the answers stay.
	if dlog, err = decisionlog.Open(logPath, nil, decisionlog.Options{}); err != nil {
		t.Fatal(err)
	}
	calls := len(ep.CallsFor("web"))
	_, stop = f.StartStoppable(set, nil, func(o *run.Options) { o.DecisionLog = dlog })
	f.Eventually("the pass after the restart", func() (bool, error) { return len(ep.CallsFor("web")) > calls, nil })
	stop() // drains the pass
	if err := dlog.Close(); err != nil {
		t.Fatal(err)
	}
	if last := lastDecisionOf(t, f.GetCR("web")); last.ID != bySpec.Decision {
		t.Errorf("after the restart, status.lastDecision %s, want still %s: a pass that wrote nothing recorded a decision", last.ID, bySpec.Decision)
	}
	for field, want := range map[string]string{"spec.replicas": byConfig.Decision, "spec.template.spec.containers[0].image": bySpec.Decision} {
		if got := blameJSON(t, f.NS, field, logPath); got.Decision != want {
			t.Errorf("after the restart, blame %s names %s, want %s", field, got.Decision, want)
		}
	}

	// Another manager changes replicas while ork is stopped: it is named as the last writer.
	f.patchChild(runtest.Deployments, "web", types.MergePatchType, `{"spec":{"replicas":5}}`, "kubectl-edit")
	byHand := blameJSON(t, f.NS, "spec.replicas", logPath)
	if byHand.ByOrk || byHand.ChangedBy == nil || byHand.ChangedBy.Manager != "kubectl-edit" {
		t.Errorf("blame spec.replicas after a hand edit = %+v, want kubectl-edit named as the last writer", byHand)
	}

	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"creds"`) {
		t.Errorf("the log does not name the related Secret by reference: %s", raw)
	}
	for _, secret := range []string{password, "cHctYzBmZmVl"} { // the value, and its base64's start
		if strings.Contains(string(raw), secret) {
			t.Errorf("the decision log holds the Secret's value %q", secret)
		}
	}
	if code, out, errOut := orkCLI(t, "audit", "verify", logPath); code != 0 {
		t.Fatalf("ork audit verify of the log: exit %d: %s%s", code, out, errOut)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	if len(lines) < 3 {
		t.Fatalf("the log has %d lines, want one per pass that called (3 at least)", len(lines))
	}
	// One byte of the second line flipped: the chain breaks there.
	at := len(lines[0]) + 1 + bytes.Index(lines[1], []byte(`"trigger":"`)) + len(`"trigger":"`)
	tampered := bytes.Clone(raw)
	tampered[at] ^= 0x01
	bad := filepath.Join(f.Dir, "tampered.log")
	if err := os.WriteFile(bad, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := orkCLI(t, "audit", "verify", bad)
	if code != 1 || !strings.Contains(out+errOut, fmt.Sprintf("line 2 of %d", len(lines))) {
		t.Errorf("ork audit verify of a flipped byte: exit %d, %q; want 1 naming line 2", code, out+errOut)
	}
}

// An entry names the custom resource's resourceVersion after the pass's own writes to it:
// the create pass adds ork's finalizer (the call sees that version) and writes the status,
// so its entry names the version whose status.lastDecision is that very decision, not the
// one created. Every entry names a version the CR had.
func TestDecisionLogNamesTheCRAfterOrksOwnWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Extra: "            finalize: true\n"})
	w, err := f.CRs().Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	logPath := filepath.Join(f.Dir, "decisions.log")
	dlog, err := decisionlog.Open(logPath, nil, decisionlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, stop := f.StartStoppable(set, nil, func(o *run.Options) { o.DecisionLog = dlog })
	created := f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	stop()
	if err := dlog.Close(); err != nil {
		t.Fatal(err)
	}
	final := f.GetCR("web").GetResourceVersion()
	versions := map[string]*unstructured.Unstructured{} // every version the CR had, up to final
	for versions[final] == nil {
		select {
		case ev := <-w.ResultChan():
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				versions[u.GetResourceVersion()] = u
			}
		case <-t.Context().Done():
			t.Fatalf("the watch did not reach resourceVersion %s", final)
		}
	}
	raw, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var entries []decision.Entry
	if err := decisionlog.Scan(raw, func(_ int, e decision.Entry) error { entries = append(entries, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 || entries[0].Trigger != "create" {
		t.Fatalf("log entries %+v, want the create pass's first", entries)
	}
	first := entries[0]
	if first.Object.ResourceVersion == created.GetResourceVersion() {
		t.Errorf("the create pass's entry names resourceVersion %s, the one created, before ork's finalizer and status", first.Object.ResourceVersion)
	}
	if at := versions[first.Object.ResourceVersion]; at == nil {
		t.Errorf("the create pass's entry names resourceVersion %s, which the CR never had (%d versions seen)", first.Object.ResourceVersion, len(versions))
	} else if d, ok, _ := decision.FromStatus(at); !ok || d.ID != first.Decision {
		t.Errorf("at the entry's resourceVersion %s, status.lastDecision is %+v, want the entry's decision %s", first.Object.ResourceVersion, d, first.Decision)
	}
	for _, e := range entries[1:] {
		if versions[e.Object.ResourceVersion] == nil {
			t.Errorf("entry %s (%s) names resourceVersion %s, which the CR never had", e.Decision, e.Trigger, e.Object.ResourceVersion)
		}
	}
}
