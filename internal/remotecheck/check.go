// Package remotecheck checks a remote reconciler against ork's wire contract without a
// cluster: it sends the PreparedRequests ork would send for one custom resource (each with
// prepared.dryRun) and judges every answer by the JSON Schema, by ork's own decoder and
// intent builders, and by the Katalog's managedResources, then checks that the answer is
// stable once the reconciler's own children are sent back.
package remotecheck

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/operation"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/wireschema"
)

// Options select what to check.
type Options struct {
	// CRD is the Katalog name of a remote CRD; required.
	CRD string
	// CR is the custom resource to reconcile, as read from a file; required. What the API
	// server would assign (namespace, uid, generation) is filled in.
	CR *unstructured.Unstructured
	// Endpoint replaces reconcile.remote.endpoint; default: the Katalog's.
	Endpoint string
	// IncludeDelete adds the delete request; default false, since a real reconciler may
	// clean up real things whatever prepared.dryRun says.
	IncludeDelete bool
	// Secrets reads auth.secretRef and tls.caSecretRef; required when either is declared.
	Secrets remote.SecretSource
	// Objects stand in for the cluster's objects that payload.related reads (the CR file's
	// other documents, --related files); default none: every entry finds nothing.
	Objects []*unstructured.Unstructured
	// Candidate, when set, is a candidate reconciler's URL: every request goes to it too and
	// its answers are compared with the checked reconciler's, as ork run's shadow mode does
	// (Request.Candidate). Its answers never make the check fail. Default none.
	Candidate string
	// Operator is the operator ork run would run as (ork run --name): the operator label on
	// every planned child, and so part of its applied digest; default
	// naming.DefaultOperator.
	Operator string
	// SecretFile is a Secrets file to suggest when a Secret is missing (the secret.yaml
	// beside the Katalog); default none.
	SecretFile string
	// OperationWait bounds the time the check waits, in all, for the operations of
	// "pending" answers it follows; default DefaultOperationWait. Each wait is the
	// operation's pollAfter (as ork run bounds it), cut to what is left.
	OperationWait time.Duration
	// Now and Sleep are the check's clock; default the real one.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
}

// Report is the outcome of a check; -o json prints it as is.
type Report struct {
	CRD string `json:"crd"`
	// CR is the custom resource's key, "namespace/name".
	CR string `json:"cr"`
	// Related names what each payload.related entry resolved to and found ("config:
	// configmaps default/web-config (1)"); MissingRelated the required ones that found
	// nothing, for which ork run would not call.
	Related        []string `json:"related,omitempty"`
	MissingRelated []string `json:"missingRelated,omitempty"`
	// Endpoint is the URL called, without user info and query.
	Endpoint string `json:"endpoint"`
	Timeout  string `json:"timeout"`
	// OperationWait is Options.OperationWait, the bound on following operations.
	OperationWait string `json:"operationWait"`
	Conformant    bool   `json:"conformant"`
	// Answered: at least one request got an HTTP answer (of any status). Without one the
	// reconciler was not checked at all: nothing listens, every call timed out, or the
	// request could not be built (a missing Secret).
	Answered   bool        `json:"answered"`
	Requests   []Request   `json:"requests"`
	Violations []Violation `json:"violations"`
	// Candidate is Options.Candidate's URL, without user info and query; Divergences the
	// number of requests whose candidate answer differs.
	Candidate   string `json:"candidate,omitempty"`
	Divergences int    `json:"divergences,omitempty"`
	// NotSent names the requests left out after a failure that every later one would
	// repeat (an unreachable endpoint, a missing Secret).
	NotSent []string `json:"notSent,omitempty"`
}

// Request is one request sent and what came back.
type Request struct {
	// Name is "create", or "create, children sent back" in the second round.
	Name    string `json:"name"`
	Round   int    `json:"round"`
	Trigger string `json:"trigger"`
	// Children is the number of children sent in prepared.children.
	Children int `json:"children"`
	// Status is the HTTP status; 0 when no response arrived.
	Status    int     `json:"status"`
	LatencyMS float64 `json:"latencyMs"`
	// Reason and Message are ork's verdict, as ork run would put them in the Ready
	// condition (Reason ReconcileSucceeded on success).
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Resources are the objects the answer would have ork apply ("deployments/web").
	Resources []string `json:"resources"`
	// Stable is set in the second round: whether the resources equal the first round's.
	Stable *bool `json:"stable,omitempty"`
	// Candidate is the candidate's answer to the same request (Options.Candidate).
	Candidate *CandidateAnswer `json:"candidate,omitempty"`
	// Operation is the operation of a "pending" answer; the check polls it.
	Operation *PendingOperation `json:"operation,omitempty"`
	// Poll is the prepared.operation of a request that follows a "pending" answer (trigger
	// requeue, named "create, poll 1", or "create, timed out" past the deadline); WaitedMS
	// how long the check waited before sending it.
	Poll     *operation.Prepared `json:"poll,omitempty"`
	WaitedMS float64             `json:"waitedMs,omitempty"`
}

// Severity of a violation.
const (
	Error   = "error"
	Warning = "warning"
)

// Checks that find violations.
const (
	CheckRequest    = "request"          // the request could not be built or sent
	CheckHTTP       = "http"             // no response, or a status other than 200
	CheckLatency    = "latency"          // past or near reconcile.remote.timeout
	CheckSchema     = "schema"           // schema/remote-reconcile-result.schema.json
	CheckDecoder    = "decoder"          // ork's decoder rejects the body
	CheckResult     = "result"           // a valid answer ork would not take as success
	CheckBuild      = "build"            // ork's intent builders reject a resource
	CheckManaged    = "managedResources" // a resource of an undeclared type
	CheckStability  = "stability"        // the answer changed once its children came back
	maxLatencyShare = 2                  // warn above timeout/maxLatencyShare
)

// Violation is one way an answer breaks the contract.
type Violation struct {
	Severity string `json:"severity"`
	// Request is the Name of the request whose answer broke it.
	Request string `json:"request"`
	// Path locates the offending value in the answer ("$.resources[0].fields.imagee"); ""
	// when the exchange as a whole is at fault.
	Path    string `json:"path"`
	Check   string `json:"check"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// checker holds what every request of one check needs.
type checker struct {
	crd *katalog.CRD
	rec *remote.Reconciler
	// cand is Options.Candidate's reconciler; nil without one.
	cand     *remote.Reconciler
	schema   *wireschema.Validator
	types    planner.Types
	force    *bool
	cr       *unstructured.Unstructured
	key      string
	children bool
	// related is prepared.related, the same for every request.
	related   map[string][]map[string]any
	timeout   time.Duration
	katalogAt string
	// secretFile is Options.SecretFile.
	secretFile string
	clock      clock
}

// Run checks the reconciler of opts.CRD. It returns an error only when the check cannot
// start (no such remote CRD, an invalid remote block); every problem of the reconciler is a
// Violation in the Report.
func Run(ctx context.Context, set *katalog.Set, opts Options) (Report, error) {
	crd := set.CRD(opts.CRD)
	switch {
	case crd == nil:
		return Report{}, fmt.Errorf("no CRD %q in the Katalog", opts.CRD)
	case !crd.IsRemote():
		return Report{}, fmt.Errorf("CRD %q has no reconcile.remote to check", opts.CRD)
	case opts.CR == nil:
		return Report{}, fmt.Errorf("no custom resource to send")
	}
	c := crd.WithEndpoint(opts.Endpoint)
	rec, err := remote.New(c, remote.Options{Secrets: opts.Secrets})
	if err != nil {
		return Report{}, fmt.Errorf("remote reconciler: %w", err)
	}
	v, err := wireschema.New()
	if err != nil {
		return Report{}, err
	}
	types := planner.NewTypes(crd, set.CRDs)
	types.Operator = opts.Operator
	cr := manifest.AsServed(opts.CR, crd.IsNamespaced())
	ck := &checker{
		crd: crd, rec: rec, schema: v, types: types, force: crd.OperatorBox.Reconcile.ForceConflict, cr: cr, key: key(cr),
		children: c.OperatorBox.Reconcile.Remote.Payload.Children.Enabled, timeout: rec.Timeout(),
		katalogAt:  katalog.DisplayPath(katalog.CRDPath(crd.Name, "operatorBox.reconcile.remote")),
		secretFile: opts.SecretFile,
	}
	if opts.OperationWait <= 0 {
		opts.OperationWait = DefaultOperationWait
	}
	ck.clock = clock{now: opts.Now, sleep: opts.Sleep, left: opts.OperationWait, bound: opts.OperationWait}
	if ck.clock.now == nil {
		ck.clock.now = time.Now
	}
	if ck.clock.sleep == nil {
		ck.clock.sleep = sleep
	}
	rep := Report{CRD: crd.Name, CR: ck.key, Endpoint: c.OperatorBox.Reconcile.Remote.Endpoint, Timeout: rec.Timeout().String(),
		OperationWait: opts.OperationWait.String()}
	if opts.Candidate != "" {
		if ck.cand, err = remote.New(candidateCRD(crd, opts.Candidate), remote.Options{Secrets: opts.Secrets}); err != nil {
			return Report{}, fmt.Errorf("candidate reconciler: %w", err)
		}
		rep.Candidate = redactedURL(opts.Candidate)
	}
	if entries := c.OperatorBox.Reconcile.Remote.Payload.Related; len(entries) > 0 {
		found, err := related.FromObjects(entries, set.CRDs, cr.Object, opts.Objects)
		if err != nil {
			return Report{}, fmt.Errorf("payload.related: %w", err)
		}
		ck.related = found.Related
		for i, ref := range found.Refs {
			rep.Related = append(rep.Related, fmt.Sprintf("%s (%d)", ref, len(found.Related[entries[i].As])))
		}
		rep.MissingRelated = found.Missing
	}
	triggers := []remote.Trigger{remote.TriggerCreate, remote.TriggerUpdate, remote.TriggerResync}
	if opts.IncludeDelete {
		triggers = append(triggers, remote.TriggerDelete)
	}
	var steps []step
	for _, t := range triggers {
		steps = append(steps, step{round: 1, trigger: t})
	}
	for _, t := range triggers[:3] {
		steps = append(steps, step{round: 2, trigger: t})
	}
	first := map[remote.Trigger][]resources.Object{}
	for i, s := range steps {
		if s.round == 2 {
			built, ok := first[s.trigger]
			if !ok {
				continue // no usable first answer to send back
			}
			s.sentBack = built
		}
		fatal := false
		for _, o := range ck.follow(ctx, s) {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			if o.endpoint != "" {
				rep.Endpoint = o.endpoint
			}
			rep.Requests = append(rep.Requests, o.request)
			if c := o.request.Candidate; c != nil && len(c.Divergences) > 0 {
				rep.Divergences++
			}
			rep.Violations = append(rep.Violations, o.violations...)
			// Round 2 sends back what the last answer of round 1 applied: an operation's
			// final answer, when it ended within the bound.
			if s.round == 1 && o.built != nil {
				first[s.trigger] = o.built
			}
			fatal = fatal || o.fatal
		}
		if fatal {
			for _, rest := range steps[i+1:] {
				if _, ok := first[rest.trigger]; rest.round == 1 || ok {
					rep.NotSent = append(rep.NotSent, rest.name(ck.children))
				}
			}
			break
		}
	}
	rep.Conformant = true
	for _, r := range rep.Requests {
		rep.Answered = rep.Answered || r.Status != 0
	}
	for _, v := range rep.Violations {
		if v.Severity == Error {
			rep.Conformant = false
		}
	}
	if rep.Violations == nil {
		rep.Violations = []Violation{}
	}
	return rep, nil
}

// redactedURL is s without user info and query, which may carry credentials.
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}

func key(cr *unstructured.Unstructured) string {
	if cr.GetNamespace() == "" {
		return cr.GetName()
	}
	return cr.GetNamespace() + "/" + cr.GetName()
}

// step is one request of the sequence.
type step struct {
	round   int
	trigger remote.Trigger
	// sentBack are the first round's objects for this trigger, sent as children in round 2.
	sentBack []resources.Object
}

func (s step) name(children bool) string {
	switch {
	case s.round == 1:
		return string(s.trigger)
	case children:
		return string(s.trigger) + ", children sent back"
	}
	return string(s.trigger) + ", again"
}
