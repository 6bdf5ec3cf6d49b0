package targetrun_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	prov "github.com/orkspace/ork/internal/decision"
	engine "github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
	"github.com/orkspace/ork/internal/trace"
)

// entries is a decision log kept in memory.
type entries struct {
	mu  sync.Mutex
	all []prov.Entry
}

func (l *entries) Append(e prov.Entry) (prov.Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, e)
	return e, nil
}

func (l *entries) targets() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.all {
		out = append(out, e.Target)
	}
	return out
}

// The trace, status.lastDecision and the decision log name the cluster a pass's children
// went to, as the conditions and logs do: namespace/name[key] of the kubeconfig Secret.
func TestTheDecisionRecordNamesTheTarget(t *testing.T) {
	f := runtest.NewFixture(t, hub)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	spokeNamespace(t, f.NS)
	putKubeconfig(t, f.NS, "spoke", spokeKubeconfig(t, ""))
	dlog := &entries{}
	eng := f.Start(targetKatalog(f, ep), nil, func(o *engine.Options) { o.DebugDecisions, o.DecisionLog = true, dlog })
	want := f.NS + "/spoke[kubeconfig]"

	f.CreateCR("web", spec("spoke"))
	waitReady(f, "web", 10*time.Second)
	rec, ok, err := prov.FromStatus(f.GetCR("web"))
	if err != nil || !ok || rec.Target != want {
		t.Errorf("status.lastDecision = %+v (found %v, %v), want target %q", rec, ok, err, want)
	}
	if got := dlog.targets(); len(got) == 0 || got[0] != want {
		t.Errorf("the decision log's targets = %q, want the first %q", got, want)
	}
	var got trace.ObjectTrace
	f.Eventually("a traced decision", func() (bool, error) {
		got, err = trace.Client{Base: eng.HealthAddr()}.Get(t.Context(), trace.Key{CRD: "app", Namespace: f.NS, Name: "web"})
		return err == nil && len(got.Decisions) > 0, err
	})
	if d := got.Decisions[0]; d.Target != want {
		t.Errorf("the trace's decision names target %q, want %q", d.Target, want)
	}

	// A CR of the local cluster names none: its record and entry leave the key out.
	f.CreateCR("near", spec(""))
	waitReady(f, "near", 10*time.Second)
	if _, found, _ := unstructured.NestedFieldNoCopy(f.GetCR("near").Object, "status", prov.StatusField, "target"); found {
		t.Errorf("the local CR's status.lastDecision has a target: %v", f.GetCR("near").Object["status"])
	}
	if !slices.Contains(dlog.targets(), "") {
		t.Errorf("the decision log's targets = %q, want one entry without a target (the local CR's)", dlog.targets())
	}
}
