package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	goldenfile "github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/run/runtest"
)

// versions maps every object of the fixture's namespace that ork could write (its CRs and
// the managed types) to its resourceVersion.
func (f *fixture) versions() map[string]string {
	f.T.Helper()
	out := map[string]string{}
	for _, gvr := range []schema.GroupVersionResource{f.GVR, runtest.Deployments, runtest.Services, runtest.ConfigMaps} {
		list, err := f.Dyn.Resource(gvr).Namespace(f.NS).List(f.T.Context(), metav1.ListOptions{})
		if err != nil {
			f.T.Fatal(err)
		}
		for _, u := range list.Items {
			out[gvr.Resource+"/"+u.GetName()] = u.GetResourceVersion()
		}
	}
	return out
}

// allEvents lists the Events of the fixture's namespace.
func (f *fixture) allEvents() []corev1.Event {
	f.T.Helper()
	list, err := env.Clientset.CoreV1().Events(f.NS).List(f.T.Context(), metav1.ListOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	return list.Items
}

// orkDryRun runs `ork run --dry-run` to completion (bounded) and returns stdout, stderr and
// the exit code.
func orkDryRun(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"run", "--dry-run"}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("ork run --dry-run did not exit within 2 minutes:\n%s", errOut.String())
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}

// ork run --dry-run against a live cluster: a new reconciler version's answers are applied,
// pruned, finalized and written as server-side dry runs only. The plan names what would
// change; no resourceVersion moves, no Event is recorded, every request says dryRun, and a
// CR being deleted is shown, not called. Then ork exits.
func TestDryRunChangesNothingAndPrintsThePlan(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	var version atomic.Int32
	version.Store(1)
	ep := runtest.NewEndpoint(t, func(c call) response {
		name := c.CRName()
		image, res := "nginx:1.27", []any(nil)
		if version.Load() == 2 {
			image = "nginx:1.28"
		}
		res = append(res, map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": image, "replicas": 2}})
		if version.Load() == 1 || name != "web" {
			res = append(res, map[string]any{"type": "service", "fields": map[string]any{"name": name + "-svc", "port": 80}})
		}
		res = append(res, configMapEntry(name+"-cfg", nil))
		return runtest.JSONResponse(map[string]any{"result": "ok", "status": map[string]any{"phase": fmt.Sprintf("v%d", version.Load())}, "resources": res})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps, Extra: pruneOn + finalizeOn})
	_, stop := f.StartStoppable(set, nil)
	f.liftFinalizersAtCleanup("web")
	f.liftFinalizersAtCleanup("leaving")
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.waitFinalizer("web", true)
	f.Eventually("web's children", func() (bool, error) {
		_, errD := f.Get(runtest.Deployments, "web")
		_, errS := f.Get(runtest.Services, "web-svc")
		return errD == nil && errS == nil && f.exists("web-cfg"), nil
	})
	stop()

	// What the dry run finds: web reconciled by version 1, fresh never reconciled, leaving
	// being deleted (another controller's finalizer holds it).
	f.CreateCR("fresh", map[string]any{})
	leaving := runtest.ObjectOf(f.Group+"/v1", "App", "leaving")
	leaving.SetFinalizers([]string{"example.com/hold"})
	if _, err := f.CRs().Create(t.Context(), leaving, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.CRs().Delete(t.Context(), "leaving", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	version.Store(2)
	before := f.versions()
	eventsBefore := len(f.allEvents())
	callsBefore := len(ep.Calls())

	kc := f.kubeconfig(func(*clientcmdapi.Config) {})
	// The same operator as the in-process ork that wrote web's children (the engine's
	// default name; the CLI's default is the Katalog's metadata.name).
	stdout, stderr, code := orkDryRun(t, bin, "-f", f.Katalog, "--kubeconfig", kc, "--namespace", f.NS, "--name", naming.DefaultOperator)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, stderr)
	}
	goldenfile.Assert(t, "testdata/dryrun.golden", []byte(strings.ReplaceAll(stdout, f.NS, "NS")))

	if after := f.versions(); !maps.Equal(before, after) {
		t.Errorf("resourceVersions moved in a dry run:\nbefore %v\nafter  %v", before, after)
	}
	if n := len(f.allEvents()); n != eventsBefore {
		t.Errorf("%d Events after the dry run, %d before: a dry run records none", n, eventsBefore)
	}
	calls := ep.Recorded()[callsBefore:]
	for _, c := range calls {
		if dry, _ := c.Body["prepared"].(map[string]any)["dryRun"].(bool); !dry {
			t.Errorf("a dry run's request for %s lacks prepared.dryRun: true", c.CRName())
		}
		if c.CRName() == "leaving" {
			t.Error("the reconciler was called for a CR being deleted without --include-deletes")
		}
	}
	if len(calls) != 2 {
		t.Errorf("%d calls, want 2 (web and fresh, once each)", len(calls))
	}

	// -o json is the same plan, as data.
	stdout, stderr, code = orkDryRun(t, bin, "-f", f.Katalog, "--kubeconfig", kc, "--namespace", f.NS, "--name", naming.DefaultOperator, "-o", "json")
	var report output.RunPlanReport
	if err := json.Unmarshal([]byte(stdout), &report); code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s\n%s", code, err, stdout, stderr)
	}
	if len(report.CRs) != 3 || report.CRs[2].Name != "web" || len(report.CRs[2].Changes) != 3 {
		t.Errorf("-o json: %+v, want fresh, leaving and web, web with 3 changes", report.CRs)
	}
}
