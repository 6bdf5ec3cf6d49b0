package run

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/leadership"
)

// countingReconciler counts its calls: each stands for the POST to the remote reconciler.
type countingReconciler struct{ calls *int }

func (countingReconciler) close() {}

func (r countingReconciler) reconcile(context.Context, *controller, input) decision {
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
			c := &controller{e: &Engine{lead: lead, opts: Options{Metrics: NewMetrics()}}, crd: &katalog.CRD{Name: "app"}, ledger: newLedger(),
				suspended: newSuspensions(), rec: countingReconciler{&calls}, log: slog.New(slog.DiscardHandler)}
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
