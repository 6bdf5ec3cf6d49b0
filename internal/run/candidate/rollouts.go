package candidate

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/run/kobj"
)

// ReasonRolledBack is the Warning Event on the rollout's ConfigMap when a
// candidate's gate fails.
const ReasonRolledBack = "CandidateRolledBack"

// ReasonInvalidPin is the Warning Event, once per CR, on a CR whose pin annotation
// (orkestra.orkspace.io/reconciler) names no side.
const ReasonInvalidPin = "InvalidReconcilerPin"

// Rollouts are the CRDs with a candidate, and the ConfigMap their state is kept in:
// `<name>-rollout` in ork's namespace (docs/naming.md#in-orks-namespace), one data key per CRD.
type Rollouts struct {
	deps    RolloutsDeps
	members map[string]Member
	// rolledBack are the rollbacks whose Event waits for the state write that records them
	// (the Event is recorded on the ConfigMap; a failed write must not lose it).
	rolledBack []string
}

// RolloutsDeps is what the rollout sync needs of the engine: the ConfigMap client of ork's
// namespace, the fence and the Event recorder; never the controllers.
type RolloutsDeps struct {
	// ConfigMaps are ork's namespace's.
	ConfigMaps corev1client.ConfigMapInterface
	// Namespace is ork's, and Name is ork's name (run.Options.Name): the ConfigMap is
	// <Name>-rollout in Namespace.
	Namespace, Name string
	// MayWriteAny is the write fence, asked before each write of the ConfigMap.
	MayWriteAny func() error
	// Recorder records the rollback Events on the ConfigMap; nil records none.
	Recorder     record.EventRecorder
	FieldManager string
	Log          *slog.Logger
}

// Member is one CRD's candidate, and how to reach the CRs that change sides when its
// slice moves.
type Member struct {
	Candidate *Candidate
	// List is the CRD's custom resources as its cache holds them.
	List func() []any
	// Requeue queues a pass of the CR of key on the slow lane.
	Requeue func(key string)
}

// NewRollouts is the rollout sync of members, by CRD name; none: it does nothing.
func NewRollouts(deps RolloutsDeps, members map[string]Member) *Rollouts {
	return &Rollouts{deps: deps, members: members}
}

// pass queues, on the slow lane, a pass of each CR of crd that moved: moved says whether a
// CR (its uid and annotations) changed sides.
func (r *Rollouts) pass(crd string, moved func(metav1.Object) bool) int {
	m := r.members[crd]
	n := 0
	for _, obj := range m.List() {
		cr, ok := obj.(metav1.Object)
		if !ok || !moved(cr) {
			continue
		}
		m.Requeue(kobj.KeyOf(cr))
		n++
	}
	return n
}

func (r *Rollouts) name() string { return rollout.ConfigMapName(r.deps.Name) }

// Resume reads the ConfigMap and resumes each candidate's rollout where it was, when its
// spec did not change (a restart of ork, a new leader). A value someone edited into
// nonsense stops the start: restarting the rollout at step 0 silently would move CRs.
func (r *Rollouts) Resume(ctx context.Context) error {
	if len(r.members) == 0 {
		return nil
	}
	cm, err := r.deps.ConfigMaps.Get(ctx, r.name(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read rollout state %s/%s: %w", r.deps.Namespace, r.name(), err)
	}
	for crd, m := range r.members {
		v, ok := cm.Data[crd]
		if !ok {
			continue
		}
		prev, err := rollout.Decode(v)
		if err != nil {
			return fmt.Errorf("rollout state %s/%s key %s: %w (fix or delete the key to start the rollout over)", r.deps.Namespace, r.name(), crd, err)
		}
		m.Candidate.resume(prev)
	}
	return nil
}

// Run judges each gate and writes the state every interval until ctx ends, then once more
// (a restart resumes from the last write).
func (r *Rollouts) Run(ctx context.Context, interval time.Duration) {
	if len(r.members) == 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			r.tick(final)
			return
		case <-t.C:
			r.tick(ctx)
		}
	}
}

// tick advances each rollout and writes their states.
func (r *Rollouts) tick(ctx context.Context) {
	states := map[string]rollout.State{}
	for crd, m := range r.members {
		c := m.Candidate
		s, change := c.advance()
		states[crd] = s
		switch change {
		case rollout.Failed:
			c.metrics.rollbacks.WithLabelValues(crd).Inc()
			// Each CR the candidate reconciled is passed once by stable.
			n := r.pass(crd, func(cr metav1.Object) bool {
				side, _ := rollout.SideOf(cr.GetUID(), cr.GetAnnotations(), s.FailedAtPercent)
				return c.plan.Mode == rollout.ModeCanary && side == rollout.Candidate
			})
			c.log.Warn("the candidate's gate failed: every CR is back on the stable reconciler", "reason", s.Reason, "atPercent", s.FailedAtPercent, "passedAgain", n)
			r.rolledBack = append(r.rolledBack, crd+": "+s.Reason)
		case rollout.Stepped:
			from, to := c.plan.Steps[s.Step-1], c.plan.Percent(s)
			n := r.pass(crd, func(cr metav1.Object) bool {
				return rollout.InCanary(cr.GetUID(), to) && !rollout.InCanary(cr.GetUID(), from)
			})
			c.log.Info("the candidate's gate held: the canary slice grew", "percent", to, "step", s.Step, "moved", n)
		case rollout.Completed:
			c.log.Info("the candidate's gate held at the last step", "reason", s.Reason)
		}
	}
	cm, err := r.write(ctx, states)
	if err != nil {
		r.deps.Log.Warn("write rollout state", "configmap", r.deps.Namespace+"/"+r.name(), "err", err)
		return
	}
	if cm != nil && r.deps.Recorder != nil {
		for _, why := range r.rolledBack {
			r.deps.Recorder.Event(cm, corev1.EventTypeWarning, ReasonRolledBack, why)
		}
	}
	r.rolledBack = nil
}

// write puts states into the ConfigMap, creating it when missing; an unchanged state
// writes nothing.
func (r *Rollouts) write(ctx context.Context, states map[string]rollout.State) (*corev1.ConfigMap, error) {
	data := map[string]string{}
	for crd, s := range states {
		v, err := s.Encode()
		if err != nil {
			return nil, err
		}
		data[crd] = v
	}
	cms := r.deps.ConfigMaps
	cm, err := cms.Get(ctx, r.name(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if err := r.deps.MayWriteAny(); err != nil {
			return nil, err
		}
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: r.name(), Namespace: r.deps.Namespace,
			Labels: map[string]string{naming.ManagedByLabel: naming.ManagedBy}}, Data: data}
		return cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: r.deps.FieldManager})
	}
	if err != nil {
		return nil, err
	}
	next := maps.Clone(cm.Data)
	if next == nil {
		next = map[string]string{}
	}
	maps.Copy(next, data)
	if maps.Equal(next, cm.Data) {
		return cm, nil
	}
	if err := r.deps.MayWriteAny(); err != nil {
		return nil, err
	}
	cm = cm.DeepCopy()
	cm.Data = next
	return cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: r.deps.FieldManager})
}
