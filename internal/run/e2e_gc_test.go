package run_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/orkspace/ork/internal/run/runtest"
)

// ork adds no finalizer: deleting a CR removes its children through the ownerReferences ork
// sets, by the cluster's own garbage collector (kube-controller-manager). A wrong owner
// apiVersion, kind or UID would show here as children kept, or deleted too early.
func TestChildrenAreGarbageCollectedWithTheirCR(t *testing.T) {
	t.Parallel()
	f := newFixture(t) // installs the CRD first: the garbage collector learns types when it starts
	env.StartControllerManager(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	for _, name := range []string{"web", "keep"} {
		f.CreateCR(name, map[string]any{"replicas": 1})
		f.WaitReady(name, "True")
	}

	if err := f.Dyn.Resource(f.GVR).Namespace(f.NS).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ep.NextMatching(t, "with trigger delete", func(c call) bool { return c.Trigger == "delete" && c.CRName() == "web" })
	// The collector first syncs its informers on every resource type: allow it a minute.
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, depErr := f.Get(runtest.Deployments, "web")
		_, svcErr := f.Get(runtest.Services, "web-svc")
		return apierrors.IsNotFound(depErr) && apierrors.IsNotFound(svcErr), nil
	})
	if err != nil {
		t.Fatalf("the children of the deleted CR were not garbage-collected: %v", err)
	}
	if _, err := f.Get(runtest.Deployments, "keep"); err != nil {
		t.Errorf("the Deployment of the CR that still exists: %v, want it kept", err)
	}
	if _, err := f.Get(runtest.Services, "keep-svc"); err != nil {
		t.Errorf("the Service of the CR that still exists: %v, want it kept", err)
	}
}
