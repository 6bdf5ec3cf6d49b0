package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/remote"
)

// ork rollout diff over a recording: a candidate that builds another image is listed with
// the path (exit 1), one that answers the same passes (exit 0).
func TestRolloutDiff(t *testing.T) {
	k := filepath.Join(t.TempDir(), "katalog.yaml")
	if err := os.WriteFile(k, []byte(rolloutKatalog), 0o600); err != nil {
		t.Fatal(err)
	}
	set, _, err := katalog.Load([]string{k})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec, err := exchange.NewRecorder(dir, exchange.RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := remote.New(set.CRDs[0].WithEndpoint(endpoint(t, goodAnswer)), remote.Options{Record: rec.Record})
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp", "metadata": map[string]any{"name": "my-webapp", "namespace": "default"}}
	if _, _, err := r.Call(t.Context(), remote.Request{Key: "default/my-webapp", Object: obj, Trigger: remote.TriggerCreate, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	differs := endpoint(t, `{"result":"ok","resources":[{"type":"deployment","fields":{"name":"my-webapp","image":"registry.example/s3cret:2"}}]}`)
	code, out, errOut := runOrk(t, "rollout", "diff", "-f", k, "--replay", dir, "--candidate", differs)
	if code != 1 || strings.Contains(out, "s3cret") ||
		!strings.Contains(out, "default/my-webapp create: differs at objects[apps/v1 Deployment default/my-webapp].spec.template.spec.containers[0].image") ||
		!strings.Contains(out, "webapp: 1 exchange, 1 compared, 1 diverging, 0 failed") {
		t.Errorf("a diverging candidate: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runOrk(t, "rollout", "diff", "-f", k, "--replay", dir, "--candidate", endpoint(t, goodAnswer))
	if code != 0 || !strings.Contains(out, "1 compared, 0 diverging") {
		t.Errorf("an agreeing candidate: exit %d\n%s", code, out)
	}
	if code, _, errOut = runOrk(t, "rollout", "diff", "-f", k); code != 2 || !strings.Contains(errOut, "--replay") {
		t.Errorf("without --replay: exit %d %q", code, errOut)
	}
	// A recording with nothing of the CRD's to compare is no green light.
	broken := endpoint(t, `{"result":"error","error":"boom"}`)
	if code, _, errOut := runOrk(t, "rollout", "diff", "-f", k, "--replay", dir, "--candidate", broken); code != 1 {
		t.Errorf("a candidate that compared nothing: exit %d %q, want 1", code, errOut)
	}
	otherDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(otherDir, "x.json"), []byte(`{"key":"default/x","trigger":"create","statusCode":200,"request":{"object":{"apiVersion":"other.io/v1","kind":"Other","metadata":{"name":"x","namespace":"default"}},"prepared":{"trigger":"create","attempt":1}},"response":{"result":"ok"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runOrk(t, "rollout", "diff", "-f", k, "--replay", otherDir, "--candidate", differs); code != 1 || !strings.Contains(errOut, "could be compared") {
		t.Errorf("a recording of another CRD only: exit %d %q, want 1 saying nothing was compared", code, errOut)
	}
	// ork simulate --remote --replay --candidate prints the same report (the offline
	// diff), and asks for the recording it compares with.
	code, simOut, _ := runOrk(t, "simulate", "-f", k, "--remote", "--replay", dir, "--candidate", differs)
	if code != 1 || !strings.Contains(simOut, "differs at objects[apps/v1 Deployment default/my-webapp].spec.template.spec.containers[0].image") {
		t.Errorf("simulate --candidate: exit %d\n%s", code, simOut)
	}
	if code, _, errOut = runOrk(t, "simulate", "-f", k, "--remote", "--candidate", differs); code != 2 || !strings.Contains(errOut, "--candidate needs --replay") {
		t.Errorf("simulate --candidate without --replay: exit %d %q", code, errOut)
	}
}
