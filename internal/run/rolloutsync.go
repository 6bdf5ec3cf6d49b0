package run

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rollout"
	"github.com/orkspace/ork/internal/run/kobj"
)

// ReasonCandidateRolledBack is the Warning Event on the rollout's ConfigMap when a
// candidate's gate fails.
const ReasonCandidateRolledBack = "CandidateRolledBack"

// ReasonInvalidReconcilerPin is the Warning Event, once per CR, on a CR whose pin annotation
// (orkestra.orkspace.io/reconciler) names no side.
const ReasonInvalidReconcilerPin = "InvalidReconcilerPin"

// rollouts are the controllers with a candidate, and the ConfigMap their state is kept in:
// `<name>-rollout` in ork's namespace (docs/naming.md#in-orks-namespace), one data key per CRD.
type rollouts struct {
	e     *Engine
	cands map[string]*candidate
	// ctrls are the candidates' controllers, whose CRs change sides when a slice moves.
	ctrls map[string]*controller
	// rolledBack are the rollbacks whose Event waits for the state write that records them
	// (the Event is recorded on the ConfigMap; a failed write must not lose it).
	rolledBack []string
}

func (e *Engine) rollouts(controllers []*controller) *rollouts {
	r := &rollouts{e: e, cands: map[string]*candidate{}, ctrls: map[string]*controller{}}
	for _, c := range controllers {
		if c.cand != nil {
			r.cands[c.cfg.crd.Name], r.ctrls[c.cfg.crd.Name] = c.cand, c
		}
	}
	return r
}

// pass queues, on the slow lane, a pass of each CR of crd that moved: moved says whether a
// CR (its uid and annotations) changed sides.
func (r *rollouts) pass(crd string, moved func(metav1.Object) bool) int {
	c := r.ctrls[crd]
	n := 0
	for _, obj := range c.informer.GetIndexer().List() {
		cr, ok := obj.(metav1.Object)
		if !ok || !moved(cr) {
			continue
		}
		key := kobj.KeyOf(cr)
		c.add(key, addOpts{trigger: TriggerResync})
		n++
	}
	return n
}

func (r *rollouts) name() string { return rollout.ConfigMapName(r.e.opts.Name) }

// resume reads the ConfigMap and resumes each candidate's rollout where it was, when its
// spec did not change (a restart of ork, a new leader). A value someone edited into
// nonsense stops the start: restarting the rollout at step 0 silently would move CRs.
func (r *rollouts) resume(ctx context.Context) error {
	if len(r.cands) == 0 || r.e.dry != nil {
		return nil
	}
	cm, err := r.e.kube.CoreV1().ConfigMaps(r.e.opts.Namespace).Get(ctx, r.name(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read rollout state %s/%s: %w", r.e.opts.Namespace, r.name(), err)
	}
	for crd, c := range r.cands {
		v, ok := cm.Data[crd]
		if !ok {
			continue
		}
		prev, err := rollout.Decode(v)
		if err != nil {
			return fmt.Errorf("rollout state %s/%s key %s: %w (fix or delete the key to start the rollout over)", r.e.opts.Namespace, r.name(), crd, err)
		}
		c.resume(prev)
	}
	return nil
}

// run judges each gate and writes the state every interval until ctx ends, then once more
// (a restart resumes from the last write).
func (r *rollouts) run(ctx context.Context, interval time.Duration) {
	if len(r.cands) == 0 || r.e.dry != nil {
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
func (r *rollouts) tick(ctx context.Context) {
	states := map[string]rollout.State{}
	for crd, c := range r.cands {
		s, change := c.advance()
		states[crd] = s
		switch change {
		case rollout.Failed:
			r.e.opts.Metrics.candidate.rollbacks.WithLabelValues(crd).Inc()
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
		r.e.log.Warn("write rollout state", "configmap", r.e.opts.Namespace+"/"+r.name(), "err", err)
		return
	}
	if cm != nil && r.e.recorder != nil {
		for _, why := range r.rolledBack {
			r.e.recorder.Event(cm, corev1.EventTypeWarning, ReasonCandidateRolledBack, why)
		}
	}
	r.rolledBack = nil
}

// write puts states into the ConfigMap, creating it when missing; an unchanged state
// writes nothing.
func (r *rollouts) write(ctx context.Context, states map[string]rollout.State) (*corev1.ConfigMap, error) {
	data := map[string]string{}
	for crd, s := range states {
		v, err := s.Encode()
		if err != nil {
			return nil, err
		}
		data[crd] = v
	}
	cms := r.e.kube.CoreV1().ConfigMaps(r.e.opts.Namespace)
	cm, err := cms.Get(ctx, r.name(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if err := r.e.fence.mayWriteAny(); err != nil {
			return nil, err
		}
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: r.name(), Namespace: r.e.opts.Namespace,
			Labels: map[string]string{naming.ManagedByLabel: naming.ManagedBy}}, Data: data}
		return cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: FieldManager})
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
	if err := r.e.fence.mayWriteAny(); err != nil {
		return nil, err
	}
	cm = cm.DeepCopy()
	cm.Data = next
	return cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: FieldManager})
}
