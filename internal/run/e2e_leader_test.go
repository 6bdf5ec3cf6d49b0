package run_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// With --leader-elect only the Lease holder reconciles; when it stops it releases the
// Lease and the standby takes over at once.
func TestLeaderElectionHandsOver(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()})
	elect := func(id string) func(*run.Options) {
		return func(o *run.Options) { o.LeaderElect, o.Identity, o.LeaseName = true, id, "ork-e2e" }
	}
	a := f.NewEngine(set, nil, elect("replica-a"))
	b := f.NewEngine(set, nil, elect("replica-b"))

	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan error, 1)
	go func() { doneA <- a.Run(ctxA) }()
	f.Eventually("replica-a leading and ready", func() (bool, error) { return a.Ready(), nil })

	ctxB, stopB := context.WithCancel(context.Background())
	doneB := make(chan error, 1)
	go func() { doneB <- b.Run(ctxB) }()
	t.Cleanup(func() {
		stopB()
		if err := <-doneB; err != nil {
			t.Errorf("replica-b: %v", err)
		}
	})
	f.Eventually("replica-b serving /readyz as a standby", func() (bool, error) {
		if b.HealthAddr() == "" {
			return false, nil
		}
		res, err := http.Get(fmt.Sprintf("http://%s/readyz", b.HealthAddr()))
		if err != nil {
			return false, err
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK, nil
	})
	if b.Ready() {
		t.Fatal("replica-b runs its controllers while replica-a holds the Lease")
	}
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")

	stopA()
	if err := <-doneA; err != nil {
		t.Fatalf("replica-a stopped with %v", err)
	}
	f.Eventually("replica-b taking over", func() (bool, error) { return b.Ready(), nil })
	lease, err := env.Clientset.CoordinationV1().Leases(f.NS).Get(t.Context(), "ork-e2e", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if holder := lease.Spec.HolderIdentity; holder == nil || *holder != "replica-b" {
		t.Errorf("Lease holder = %v, want replica-b", holder)
	}
}
