package run_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// An operator that ran under the old default name (orkestra) and starts under its
// Katalog's name keeps its custom resources: the children they control are relabelled once,
// before the caches start, so the first call already sees them and no pass ends in
// OperatorConflict. An object labelled orkestra but controlled by something else (another
// ork named orkestra, for CRDs of its own) is never touched.
func TestRenamedOperatorTakesItsDefaultNamedChildren(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(c call) response {
		return runtest.JSONResponse(map[string]any{"result": "ok", "resources": []any{configMapEntry("web-cm", nil)}})
	})
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Managed: managedWithConfigMaps,
		Payload: "              children:\n                enabled: true\n"})

	// The development loop, run under the old default name.
	_, stop := f.StartStoppable(set, nil, func(o *run.Options) { o.Name = naming.DefaultOperator })
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.waitPassesDone(ep)
	stop()
	cm, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "web-cm", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels[run.OperatorLabel] != naming.DefaultOperator {
		t.Fatalf("web-cm labels = %v, want %s=%s", cm.Labels, run.OperatorLabel, naming.DefaultOperator)
	}
	// Another ork named orkestra, reconciling a CRD of its own.
	foreign := metav1.OwnerReference{APIVersion: "other.ork.test/v1", Kind: "Db", Name: "web", UID: "0000-other-db",
		Controller: ptr.To(true)}
	f.createConfigMap("db-cm", map[string]string{run.ManagedByLabel: run.ManagedByValue,
		run.OperatorLabel: naming.DefaultOperator}, foreign)
	before, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "db-cm", getOpts)
	if err != nil {
		t.Fatal(err)
	}

	// The install, under the Katalog's name.
	calls := len(ep.Recorded())
	f.Start(set, nil, func(o *run.Options) { o.Name = "my-operator" })
	f.Eventually("a finished pass of web after the start under the new name", func() (bool, error) {
		return len(ep.Recorded()) > calls && f.finishedPasses() >= 1, nil
	})
	first := ep.Recorded()[calls]
	prepared, _ := first.Body["prepared"].(map[string]any)
	children, _ := prepared["children"].(map[string]any)
	if cms, _ := children["configmap"].(map[string]any); cms["web-cm"] == nil {
		t.Errorf("the first call's prepared.children = %v, want web-cm in it", children)
	}
	got := f.WaitReady("web", "True")
	if msg, _ := runtest.ReadyCondition(got)["message"].(string); strings.Contains(msg, "OperatorConflict") {
		t.Errorf("Ready message = %q after the rename", msg)
	}
	cm, err = env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "web-cm", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels[run.OperatorLabel] != "my-operator" {
		t.Errorf("web-cm labels = %v, want %s=my-operator", cm.Labels, run.OperatorLabel)
	}
	after, err := env.Clientset.CoreV1().ConfigMaps(f.NS).Get(t.Context(), "db-cm", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion || after.Labels[run.OperatorLabel] != naming.DefaultOperator {
		t.Errorf("another operator's object was written: labels %v, resourceVersion %s -> %s",
			after.Labels, before.ResourceVersion, after.ResourceVersion)
	}
	if !strings.Contains(f.Logs.String(), "relabelled the children") {
		t.Errorf("no log line says the children were relabelled:\n%s", f.Logs.String())
	}
}
