package decision

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
)

// Annotation carries, on every child ork writes, the id of the decision that wrote it.
const Annotation = naming.DecisionAnnotation

// StatusField is the key under status of the LastDecision.
const StatusField = "lastDecision"

// ReconcilerVersionHeader is the response header in which a remote reconciler names its
// version; ork records it with the decision.
const ReconcilerVersionHeader = "Ork-Reconciler-Version"

// Reconciler names who answered: the rollout side (stable or candidate; empty without a
// candidate) and the version the reconciler reported in ReconcilerVersionHeader.
type Reconciler struct {
	Side    string `json:"side,omitempty"`
	Version string `json:"version,omitempty"`
}

// LastDecision is the compact record of a custom resource's last pass that wrote something,
// as ork keeps it in status.lastDecision.
type LastDecision struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// Trigger is what queued the pass: create, update, delete, child, related, resync, requeue.
	Trigger string `json:"trigger"`
	// Inputs is InputsDigest of what the answer depended on.
	Inputs     string     `json:"inputs"`
	Reconciler Reconciler `json:"reconciler,omitzero"`
	// Target is the cluster the pass's children went to, as the engine names it in
	// conditions and logs (namespace/name[key] of the kubeconfig Secret); empty for the
	// cluster ork runs in.
	Target string `json:"target,omitempty"`
	// Children is ChildrenDigest of the custom resource's children as the pass left them,
	// recorded with reconcile.remote.skipUnchanged by a pass whose answer was applied
	// whole; "" otherwise, and no skip trusts a record without it (skip.go).
	Children string `json:"children,omitempty"`
	// RequeueAfter is the periodic requeue that answer asked for (a Go duration; "" none),
	// so that a pass that skips its call keeps it.
	RequeueAfter string `json:"requeueAfter,omitempty"`
}

// Status is the record as an unstructured value, for a status write. The write is a merge
// patch: what this record lacks of an earlier one's reconciler is sent as null, so that a
// side or version that no longer holds (a rollout over, a header no longer sent) goes.
func (d LastDecision) Status() map[string]any {
	m := map[string]any{
		"id":      d.ID,
		"time":    d.Time.UTC().Format(time.RFC3339Nano),
		"trigger": d.Trigger,
		"inputs":  d.Inputs,
	}
	r := map[string]any{"side": nil, "version": nil}
	if d.Reconciler.Side != "" {
		r["side"] = d.Reconciler.Side
	}
	if d.Reconciler.Version != "" {
		r["version"] = d.Reconciler.Version
	}
	m["reconciler"] = r
	if d.Reconciler == (Reconciler{}) {
		m["reconciler"] = nil
	}
	m[targetField] = nil // back to the local cluster: an earlier record's target goes
	if d.Target != "" {
		m[targetField] = d.Target
	}
	// The same for the keys only skipUnchanged records: an earlier record's would describe
	// children this pass did not look at.
	m["children"], m["requeueAfter"] = nilIfEmpty(d.Children), nilIfEmpty(d.RequeueAfter)
	return m
}

// FromStatus reads status.lastDecision of a custom resource; ok is false when it has none.
func FromStatus(cr *unstructured.Unstructured) (d LastDecision, ok bool, err error) {
	v, found, err := unstructured.NestedFieldNoCopy(cr.Object, "status", StatusField)
	if err != nil || !found || v == nil {
		return LastDecision{}, false, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return LastDecision{}, false, fmt.Errorf("status.%s: %w", StatusField, err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return LastDecision{}, false, fmt.Errorf("status.%s: %w", StatusField, err)
	}
	return d, true, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
