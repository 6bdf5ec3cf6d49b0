package run_test

import (
	"os"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/run/runtest"
)

// --endpoint CRD=URL calls URL instead of the Katalog's endpoint, for this run only: the
// Katalog names an in-cluster Service that nothing here serves, as `ork init` writes it,
// and the reconciler runs on this machine. The Katalog file is not changed.
func TestRunEndpointOverride(t *testing.T) {
	bin := bins.Build(t, "github.com/orkspace/ork/cmd/ork")
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	const inCluster = "http://app-reconciler.default.svc:8088/reconcile"
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: inCluster})
	before, err := os.ReadFile(f.Katalog)
	if err != nil {
		t.Fatal(err)
	}

	if stderr, code := orkRun(t, bin, nil, "-f", f.Katalog, "--kubeconfig", env.Kubeconfig, "--endpoint", "ap="+ep.URL()); code != 2 ||
		!strings.Contains(stderr, `--endpoint: no CRD "ap" in the Katalog (did you mean "app"?)`) {
		t.Errorf("--endpoint ap=URL: exit %d, want 2 naming the CRD:\n%s", code, stderr)
	}

	p := startOrk(t, f, bin, "--endpoint", "app="+ep.URL())
	p.waitLine(t, f, "ork is running")
	f.CreateCR("web", map[string]any{})
	ep.Next(t) // the Katalog's endpoint resolves nowhere here: only the override answers
	f.WaitReady("web", "True")
	if !strings.Contains(f.Logs.String(), "endpoint overridden for this run") {
		t.Errorf("no log line says the endpoint is overridden:\n%s", f.Logs.String())
	}
	after, err := os.ReadFile(f.Katalog)
	if err != nil || string(after) != string(before) {
		t.Errorf("the Katalog file changed: %v", err)
	}
}
