package remotecheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/resources"
)

// sent is one request's outcome.
type sent struct {
	request    Request
	violations []Violation
	// built are the objects ork would apply; nil when it would apply nothing.
	built    []resources.Object
	endpoint string
	// fatal: every later request would fail the same way.
	fatal bool
	// pending is the operation of a "pending" answer that ork would take; nil otherwise.
	pending *operation.Answer
}

// send sends one request of the sequence, or a poll that follows its "pending" answer, and
// judges the answer.
func (ck *checker) send(ctx context.Context, s step, p poll) sent {
	name := s.name(ck.children)
	if p.name != "" {
		name = p.name
	}
	req := remote.Request{Key: ck.key, Object: ck.objectFor(s.trigger).Object, Trigger: p.trigger(s.trigger), Attempt: 1, DryRun: true, Operation: p.op}
	if ck.children {
		req.Children = ck.childrenOf(s.sentBack)
	}
	req.Related = ck.related
	res, x, err := ck.rec.Call(ctx, req)
	out := sent{endpoint: x.URL, request: Request{
		Name: name, Round: s.round, Trigger: string(req.Trigger), Status: x.StatusCode,
		LatencyMS: float64(x.Duration.Microseconds()) / 1000, Resources: []string{}, Poll: p.op,
	}}
	if p.op != nil {
		out.request.WaitedMS = float64(p.waited.Milliseconds())
	}
	for _, byName := range req.Children {
		out.request.Children += len(byName)
	}
	if ck.cand != nil {
		out.request.Candidate = ck.compare(ctx, req, res, err)
	}
	o := remote.Decide(res, err)
	out.request.Reason, out.request.Message = o.Reason, o.Message
	j := &judgement{request: name}
	out.fatal = ck.judgeExchange(j, x, err)
	if x.StatusCode == http.StatusOK {
		out.built = ck.judgeAnswer(j, s.trigger, x.Response, res, err)
	}
	if j.reason != "" {
		out.request.Reason, out.request.Message = j.reason, j.message
	}
	for _, b := range out.built {
		out.request.Resources = append(out.request.Resources, ck.types.Ref(b.Obj))
	}
	if o.Action == remote.Pending && j.reason == "" {
		out.pending, out.request.Operation = res.Operation, pendingOf(res.Operation)
	}
	// A pending answer's resources are a step on the way: stability is judged on the final one.
	if s.round == 2 && out.built != nil && out.pending == nil {
		stable := ck.judgeStability(j, s.sentBack, out.built)
		out.request.Stable = &stable
	}
	out.violations = j.result()
	return out
}

// objectFor is the custom resource as ork would send it for trigger t: generation 1 on
// create, 2 afterwards (an update follows a spec change), a deletionTimestamp on delete.
func (ck *checker) objectFor(t remote.Trigger) *unstructured.Unstructured {
	obj := ck.cr.DeepCopy()
	if t != remote.TriggerCreate {
		obj.SetGeneration(ck.cr.GetGeneration() + 1)
	}
	if t == remote.TriggerDelete {
		obj.Object["metadata"].(map[string]any)["deletionTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	}
	return obj
}

// childrenOf presents planned objects as ork run would send them back once applied,
// grouped by type and name; {} for none.
func (ck *checker) childrenOf(built []resources.Object) map[string]map[string]map[string]any {
	objs := make([]*unstructured.Unstructured, 0, len(built))
	for _, b := range built {
		objs = append(objs, b.Obj.DeepCopy())
	}
	return ck.types.Children(objs)
}

// judgeExchange judges what happened on the wire: the request sent, the status, the
// latency. It reports whether the failure would repeat on every later request.
func (ck *checker) judgeExchange(j *judgement, x exchange.Exchange, err error) (fatal bool) {
	var ce *remote.CallError
	errors.As(err, &ce)
	if x.Time.IsZero() {
		hint := fmt.Sprintf("fix the template in %s", ck.katalogAt)
		if ce != nil && (ce.Kind == remote.KindAuth || ce.Kind == remote.KindTLS) {
			hint = ck.secretHint(err)
		}
		j.add(Error, CheckRequest, "", errText(err), hint)
		return true
	}
	limit := fmt.Sprintf("reconcile.remote.timeout (%s)", ck.timeout)
	switch {
	case ce != nil && ce.Kind == remote.KindTimeout:
		j.add(Error, CheckLatency, "", ce.Message+" ("+limit+")",
			"answer within the timeout; work that takes longer: answer \"pending\" with an operation at once and go on in the background, ork polls it and holds it for you: "+operationsHint)
		return false
	case x.Duration > ck.timeout/maxLatencyShare:
		j.add(Warning, CheckLatency, "", fmt.Sprintf("answered in %s, more than half of %s", x.Duration.Round(time.Millisecond), limit),
			"a loaded reconciler or a slower network would time out: ork then retries with backoff")
	}
	switch {
	case x.StatusCode == 0:
		hint := "is the reconciler running and listening there? --endpoint URL checks another address"
		if ce != nil && ce.Kind == remote.KindTLS {
			hint = "trust the endpoint's CA with tls.caFile or tls.caSecretRef"
		}
		j.add(Error, CheckHTTP, "", errText(err), hint)
		return true
	case x.StatusCode != http.StatusOK:
		j.add(Error, CheckHTTP, "", errText(err), statusHint(x.StatusCode))
	}
	return false
}

func statusHint(code int) string {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return "ork sends the token of auth.secretRef in auth.header (\"Bearer <token>\" for Authorization): check both"
	case code == http.StatusBadRequest || code == http.StatusUnprocessableEntity:
		return "the reconciler rejected ork's PreparedRequest: decode it as schema/prepared-request.schema.json describes, and ignore fields you do not know (prepared.dryRun is one)"
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return "ork waits for Retry-After and tries again; a check is no load, so answer 200"
	case code >= 300 && code < 400:
		return "redirects are not followed: point endpoint at the final URL"
	}
	return "answer 200 always; report a failed reconcile as {\"result\": \"error\", \"error\": \"...\"} (any other status counts as a transport failure)"
}

func errText(err error) string {
	if err == nil {
		return "no answer"
	}
	return err.Error()
}

// secretHint tells a Secret the files lack from a key its Secret lacks, and names the
// secret.yaml beside the Katalog (as ork init writes it) when there is one.
func (ck *checker) secretHint(err error) string {
	var missing *manifest.MissingSecretError
	if errors.As(err, &missing) && missing.KeyOnly {
		return fmt.Sprintf("the Secret %s/%s is there, without the key %q: add it under stringData (or base64 under data), or point the secretRef's key at one it has",
			missing.Namespace, missing.Name, missing.Key)
	}
	if ck.secretFile != "" {
		return fmt.Sprintf("give ork the Secret without a cluster: pass --secrets %s (beside the Katalog), or put its manifest in the --cr file", ck.secretFile)
	}
	return "give ork the Secret without a cluster: its manifest in the --cr file or in --secrets FILE"
}
