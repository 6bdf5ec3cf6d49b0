package run_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/run/runtest"
)

// versioned answers like runtest.OKWithChildren, the Deployment's replicas from the spec,
// and names its version in the response header.
func versioned(version string) func(call) response {
	return func(c call) response {
		r := runtest.OKWithChildren(c)
		replicas := 2
		obj, _ := c.Body["object"].(map[string]any)
		spec, _ := obj["spec"].(map[string]any)
		if v, ok := spec["replicas"].(float64); ok {
			replicas = int(v)
		}
		r.Body = []byte(fmt.Sprintf(`{"result":"ok","status":{"phase":"Ready"},"resources":[`+
			`{"type":"deployment","fields":{"name":%[1]q,"image":"nginx:1.27","replicas":%[2]d,"port":8080}},`+
			`{"type":"service","fields":{"name":"%[1]s-svc","port":80,"targetPort":8080}}]}`, c.CRName(), replicas))
		r.Header = map[string]string{decision.ReconcilerVersionHeader: version}
		return r
	}
}

func lastDecisionOf(t *testing.T, cr *unstructured.Unstructured) decision.LastDecision {
	t.Helper()
	d, ok, err := decision.FromStatus(cr)
	if err != nil || !ok {
		t.Fatalf("status.lastDecision of %s: ok %v, err %v: %v", cr.GetName(), ok, err, cr.Object["status"])
	}
	return d
}

func (f *fixture) decisionOn(t *testing.T, gvrName string) string {
	t.Helper()
	gvr, name := runtest.Deployments, gvrName
	if gvrName == "web-svc" {
		gvr = runtest.Services
	}
	u, err := f.Get(gvr, name)
	if err != nil {
		t.Fatal(err)
	}
	return u.GetAnnotations()[naming.DecisionAnnotation]
}

// A pass that writes records its decision: status.lastDecision (id, trigger, inputs digest,
// the reconciler's version from its response header) and the same id on every child it
// wrote. A pass that writes nothing changes neither; a pass that writes one child puts its
// new id on that child alone.
func TestDecisionIsRecordedOnlyByPassesThatWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, versioned("1.4.2"))
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	f.CreateCR("web", map[string]any{"replicas": 2})
	f.WaitReady("web", "True")
	f.waitPassesDone(ep)

	first := lastDecisionOf(t, f.GetCR("web"))
	if !decision.ValidID(first.ID) || first.Trigger != "create" || len(first.Inputs) != len("sha256:")+64 ||
		first.Reconciler.Version != "1.4.2" || first.Reconciler.Side != "" {
		t.Errorf("lastDecision after the create = %+v, want an id, trigger create, an inputs digest, version 1.4.2 and no side", first)
	}
	for _, child := range []string{"web", "web-svc"} {
		if got := f.decisionOn(t, child); got != first.ID {
			t.Errorf("%s carries decision %q, want the create's %s", child, got, first.ID)
		}
	}

	// A label edit passes the CR again; the answer is the same: nothing is written.
	calls := len(ep.CallsFor("web"))
	labelled, err := f.CRs().Patch(t.Context(), "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"a"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.Eventually("the label's pass", func() (bool, error) { return len(ep.CallsFor("web")) > calls, nil })
	f.waitPassesDone(ep)
	cr := f.GetCR("web")
	if got := lastDecisionOf(t, cr); got.ID != first.ID {
		t.Errorf("a pass that wrote nothing wrote lastDecision %+v", got)
	}
	if cr.GetResourceVersion() != labelled.GetResourceVersion() {
		t.Errorf("the custom resource moved from %s to %s in a pass that changed nothing", labelled.GetResourceVersion(), cr.GetResourceVersion())
	}
	for _, child := range []string{"web", "web-svc"} {
		if got := f.decisionOn(t, child); got != first.ID {
			t.Errorf("after a pass that wrote nothing, %s carries %q, want %s", child, got, first.ID)
		}
	}

	// The spec's replicas change the Deployment only: it carries the new decision, the
	// Service keeps the create's.
	f.PatchSpec("web", `{"spec":{"replicas":3}}`)
	f.Eventually("the update's decision", func() (bool, error) {
		d, ok, err := decision.FromStatus(f.GetCR("web"))
		return ok && d.ID != first.ID, err
	})
	second := lastDecisionOf(t, f.GetCR("web"))
	if second.Trigger != "update" || second.Inputs == first.Inputs || second.ID <= first.ID {
		t.Errorf("lastDecision after the update = %+v, want trigger update, other inputs and a later id than %s", second, first.ID)
	}
	if got := f.decisionOn(t, "web"); got != second.ID {
		t.Errorf("the Deployment carries %q, want the update's %s", got, second.ID)
	}
	if got := f.decisionOn(t, "web-svc"); got != first.ID {
		t.Errorf("the Service, not written by the update, carries %q, want the create's %s", got, first.ID)
	}
}
