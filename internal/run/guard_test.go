package run

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/run/keyledger"
	"github.com/orkspace/ork/internal/run/suspensions"
)

// countingReconciler counts its calls: each stands for the POST to the remote reconciler.
type countingReconciler struct{ calls *int }

func (countingReconciler) close() {}

func (r countingReconciler) reconcile(context.Context, passEnv, input) decision {
	*r.calls++
	return decision{success: true, action: actionDone}
}

// A replica whose Lease may have passed to another makes no call either: the reconciler's
// side effects (a database created, a ticket opened) are writes too, and the new leader makes
// the same call. The Lease may have passed when the last renewal is older than the renew
// deadline (what production meets), or once it was taken as lost.
func TestNoCallWhileTheLeaseMayHavePassed(t *testing.T) {
	tests := []struct {
		name  string
		stale func(*leadership.Leadership)
	}{
		{"a renewal past the renew deadline", func(l *leadership.Leadership) { l.LeadingSince(time.Now().Add(-time.Minute)) }},
		{"a lost Lease", (*leadership.Leadership).Lose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lead := leadership.New(leadership.Options{Enabled: true, RenewDeadline: 10 * time.Second})
			tt.stale(lead)
			var calls int
			c := &controller{e: (&Engine{lead: lead, opts: Options{Metrics: NewMetrics()}}).useRing(lead, nil), ledger: keyledger.New(), suspended: suspensions.New(nil), rec: countingReconciler{&calls}, cfg: crdConfig{crd: &katalog.CRD{Name: "app"}, log: slog.New(slog.DiscardHandler)}}
			c.env = newPassEnv(c)
			cr := &unstructured.Unstructured{}
			cr.SetNamespace("ns")
			cr.SetName("web")
			cr.SetUID("u1")
			_, _, done := c.pass(t.Context(), input{key: "ns/web", cr: cr, trigger: TriggerCreate})
			if calls != 0 {
				t.Errorf("the reconciler was called %d times by a replica whose Lease may have passed, want none", calls)
			}
			if done {
				t.Error("the pass reports done: want it to stop as a lost Lease does")
			}
		})
	}
}

// losingSecrets loses the Lease while the reconciler's token is read: the guard let the
// pass through before the call, but the POST must not go out.
type losingSecrets struct{ lead *leadership.Leadership }

func (s losingSecrets) SecretValue(context.Context, string, string, string) ([]byte, error) {
	s.lead.Lose()
	return []byte("token"), nil
}

// The guard is asked again right before the POST: a Lease that passed while the token was
// read sends nothing.
func TestNoCallWhenTheLeasePassesBeforeTheSend(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		posts.Add(1)
		// An error answer: a broken guard then fails the pass without the caches this
		// bare controller lacks.
		_, _ = w.Write([]byte(`{"result":"error","error":"sent"}`))
	}))
	t.Cleanup(srv.Close)
	lead := leadership.New(leadership.Options{Enabled: true, RenewDeadline: 10 * time.Second})
	lead.LeadingSince(time.Now())
	off := false
	crd := &katalog.CRD{Name: "app", APITypes: &katalog.APITypes{Group: "myorg.io", Version: "v1", Kind: "App", Plural: "apps"},
		OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{Default: &off, Remote: &katalog.Remote{
			Endpoint: srv.URL, Protocol: "http", Timeout: "10s",
			Auth: &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Namespace: "ops", Key: "token"}},
		}}}}
	r, err := remote.New(crd, remote.Options{Secrets: losingSecrets{lead}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	c := &controller{e: (&Engine{lead: lead, opts: Options{Metrics: NewMetrics()}}).useRing(lead, nil), ledger: keyledger.New(), suspended: suspensions.New(nil), rec: &remoteReconciler{r: r}, cfg: crdConfig{crd: crd, log: slog.New(slog.DiscardHandler)}}
	c.env = newPassEnv(c)
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "App"}}
	cr.SetNamespace("ns")
	cr.SetName("web")
	cr.SetUID("u1")
	_, _, done := c.pass(t.Context(), input{key: "ns/web", cr: cr, trigger: TriggerCreate})
	if n := posts.Load(); n != 0 {
		t.Errorf("%d POSTs reached the reconciler after the Lease passed, want none", n)
	}
	if done {
		t.Error("the pass reports done: want it to stop as a lost Lease does")
	}
}
