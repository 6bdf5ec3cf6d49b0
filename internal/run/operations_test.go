package run

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/remote"
)

// A delete is called even when the operation it holds is past its deadline: a tombstone
// keeps no timed-out mark, so timing it out would stop the delete's call for good. The call
// carries the operation.
func TestADeleteIsCalledWhateverItsOperationsDeadline(t *testing.T) {
	var sent map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		sent, _ = body["prepared"].(map[string]any)
		_, _ = w.Write([]byte(`{"result":"ok"}`))
	}))
	t.Cleanup(srv.Close)
	off := false
	crd := &katalog.CRD{Name: "app", APITypes: &katalog.APITypes{Group: "myorg.io", Version: "v1", Kind: "App", Plural: "apps"},
		OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{Default: &off, Remote: &katalog.Remote{Endpoint: srv.URL, Protocol: "http", Timeout: "5s"}}}}
	r, err := remote.New(crd, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	expired := &operation.State{ID: "op-1", Key: "u1/1/op-1", Generation: 1, StartedAt: time.Now().Add(-time.Hour), Deadline: time.Now().Add(-time.Minute)}
	env := passEnv{built: true, mayWrite: func(string, types.UID) error { return nil },
		event: func(*unstructured.Unstructured, string, string, string) {},
		operation: func(context.Context, input) (*operation.State, operation.Where, error, error) {
			return expired, operation.InStatus, nil, nil
		}}
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "App"}}
	cr.SetNamespace("ns")
	cr.SetName("web")
	cr.SetUID("u1")
	cr.SetGeneration(1)
	d := (&remoteReconciler{r: r}).reconcile(t.Context(), env, input{key: "ns/web", cr: cr, trigger: TriggerDelete, deleting: true, gone: true})
	if !d.success || d.reason == operation.ReasonTimedOut {
		t.Errorf("the delete's decision = %+v, want its call answered, not a time-out", d)
	}
	op, _ := sent["operation"].(map[string]any)
	if op["id"] != "op-1" {
		t.Errorf("the delete's call carries prepared.operation %v, want op-1", sent["operation"])
	}
}
