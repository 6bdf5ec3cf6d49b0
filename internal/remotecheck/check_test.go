package remotecheck

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/manifest"
	"github.com/orkspace/ork/internal/reconcilertest"
)

// example loads examples/remote: the Katalog, its CR and its token Secret.
func example(t *testing.T) (*katalog.Set, Options) {
	t.Helper()
	set, findings, err := katalog.Load([]string{filepath.Join(reconcilertest.Examples, "katalog.yaml")})
	if err != nil || katalog.HasErrors(findings) {
		t.Fatalf("example katalog: %v %v", err, findings)
	}
	crs, err := manifest.Read(filepath.Join(reconcilertest.Examples, "cr.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := manifest.Read(filepath.Join(reconcilertest.Examples, "secret.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return set, Options{CRD: "webapp", CR: crs[0], Secrets: manifest.NewSecrets("the test's Secrets", secrets...)}
}

// Both example reconcilers pass, delete included, and answer the same when their children
// come back.
func TestExampleReconcilersConform(t *testing.T) {
	token := reconcilertest.Token(t)
	bin := reconcilertest.BuildGo(t, &bins)
	for _, ex := range []struct {
		name  string
		start func(t *testing.T) string
	}{
		{"go", func(t *testing.T) string { return reconcilertest.StartGo(t, bin, token) }},
		{"python", func(t *testing.T) string { return reconcilertest.StartPython(t, token) }},
	} {
		t.Run(ex.name, func(t *testing.T) {
			set, opts := example(t)
			opts.Endpoint, opts.IncludeDelete = ex.start(t), true
			rep, err := Run(t.Context(), set, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Conformant || len(rep.Violations) != 0 {
				t.Fatalf("not conformant: %+v", rep.Violations)
			}
			var names []string
			for _, r := range rep.Requests {
				names = append(names, r.Name)
				if r.Status != 200 || r.Reason != "ReconcileSucceeded" {
					t.Errorf("%s: HTTP %d %s", r.Name, r.Status, r.Reason)
				}
				want := []string{"deployments/my-webapp", "services/my-webapp-svc"}
				if r.Trigger == "delete" {
					want = []string{}
				}
				if d := cmp.Diff(want, r.Resources); d != "" {
					t.Errorf("%s resources (-want +got):\n%s", r.Name, d)
				}
				if r.Round == 2 && (r.Stable == nil || !*r.Stable || r.Children != 2) {
					t.Errorf("%s: stable %v with %d children, want stable with 2", r.Name, r.Stable, r.Children)
				}
			}
			want := []string{"create", "update", "resync", "delete",
				"create, children sent back", "update, children sent back", "resync, children sent back"}
			if d := cmp.Diff(want, names); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
			if rep.CR != "default/my-webapp" || rep.Timeout != "30s" || rep.Endpoint != opts.Endpoint {
				t.Errorf("report head: %s %s %s", rep.CR, rep.Timeout, rep.Endpoint)
			}
		})
	}
}

// reconciler answers like the example, with edit applied to the answer; req is the
// decoded request.
func reconciler(edit func(req, answer map[string]any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		answer := map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}, "resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": "my-webapp", "image": "nginx:1.27", "replicas": 2}},
			map[string]any{"type": "service", "fields": map[string]any{"name": "my-webapp-svc", "port": 80, "targetPort": 8080}},
		}}
		if edit != nil {
			edit(req, answer)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
	}
}

func raw(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// hangs answers nothing until ork gives up on the call (the server notices once the body
// is read) or release is closed.
func hangs(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

// v is a violation's identity in these tests: request, check, path, and a part of the
// message.
type v struct{ request, check, path, msg string }

func TestBrokenReconcilersFailWithPreciseViolations(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the servers' Close: no handler hangs it
	tests := []struct {
		name    string
		handler http.HandlerFunc
		edit    func(*Options, *katalog.Set)
		want    []v // the violations of the first request (create), in order
		notSent int
	}{
		{"wrong result value", reconciler(func(_, a map[string]any) { a["result"] = "done" }),
			nil, []v{{"create", CheckDecoder, "$.result", `unknown result "done" (want "ok", "requeue", "pending" or "error")`}}, 0},
		{"undeclared type", reconciler(func(_, a map[string]any) {
			a["resources"] = append(a["resources"].([]any), map[string]any{"type": "statefulset", "fields": map[string]any{"name": "db", "image": "postgres:16"}})
		}), nil, []v{{"create", CheckManaged, "$.resources[2]",
			`resources[2]: StatefulSet "db": type statefulsets.apps is not declared in managedResources (declare it: {group: "apps", plural: statefulsets})`}}, 0},
		{"unknown intent field", reconciler(func(_, a map[string]any) {
			f := a["resources"].([]any)[0].(map[string]any)["fields"].(map[string]any)
			f["imagee"] = f["image"]
		}), nil, []v{{"create", CheckBuild, "$.resources[0].fields.imagee",
			`resources[0] (deployment): field "imagee": unknown field (did you mean "image"?)`}}, 0},
		{"wrong field type in a full object", reconciler(func(_, a map[string]any) {
			a["resources"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": "many"}}}
		}), nil, []v{{"create", CheckBuild, "$.resources[0]", `resources[0] (Deployment)`}}, 0},
		{"non-JSON", raw(200, "<html>oops</html>"), nil,
			[]v{{"create", CheckDecoder, "$", "invalid RemoteReconcileResult: body is not a JSON object"}}, 0},
		{"unknown top-level field", raw(200, `{"result":"ok","Status":{}}`), nil,
			[]v{{"create", CheckDecoder, "$.Status", `unknown field "Status"`}}, 0},
		{"error result", reconciler(func(_, a map[string]any) { a["result"], a["error"] = "error", "spec.image is required" }), nil,
			[]v{{"create", CheckResult, "$.result", "reconciler returned error: spec.image is required"}}, 0},
		{"server error", raw(500, "boom"), nil, []v{{"create", CheckHTTP, "", `HTTP 500 Internal Server Error: "boom"`}}, 0},
		{"unauthorized", raw(401, "bad token"), nil, []v{{"create", CheckHTTP, "", `HTTP 401 Unauthorized (check auth.secretRef and auth.header): "bad token"`}}, 0},
		{"slow past the timeout", hangs(release), func(o *Options, set *katalog.Set) {
			set.CRD("webapp").OperatorBox.Reconcile.Remote.Timeout = "200ms"
		}, []v{{"create", CheckLatency, "", "no response within 200ms (reconcile.remote.timeout (200ms))"}}, 0},
		{"no Secret for auth", reconciler(nil), func(o *Options, _ *katalog.Set) { o.Secrets = manifest.NewSecrets("the CR file or --secrets") },
			[]v{{"create", CheckRequest, "", `read auth secret default/my-reconciler-token key "token": no Secret default/my-reconciler-token in the CR file or --secrets`}}, 2},
	}
	// ork run's Ready reason for the answer, where the decoder alone does not give it.
	reasons := map[string]string{"undeclared type": "ApplyFailed", "unknown intent field": "InvalidResource", "wrong result value": "InvalidRemoteResult"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			set, opts := example(t)
			opts.Endpoint = srv.URL + "/reconcile"
			if tt.edit != nil {
				tt.edit(&opts, set)
			}
			rep, err := Run(t.Context(), set, opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Conformant {
				t.Fatalf("conformant, want violations")
			}
			var got []v
			for _, x := range rep.Violations {
				if x.Request != "create" {
					continue
				}
				got = append(got, v{x.Request, x.Check, x.Path, x.Message})
				if x.Hint == "" {
					t.Errorf("violation without a hint: %+v", x)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("create's violations:\n%s\nwant %d", dump(rep.Violations), len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.request != w.request || g.check != w.check || g.path != w.path || !strings.Contains(g.msg, w.msg) {
					t.Errorf("violation %d: %+v\nwant %+v", i, g, w)
				}
			}
			if want := reasons[tt.name]; want != "" && rep.Requests[0].Reason != want {
				t.Errorf("create's verdict %s (%s), want %s as ork run would say", rep.Requests[0].Reason, rep.Requests[0].Message, want)
			}
			// Neither a request that could not be built nor one timed out got an HTTP answer.
			unanswered := tt.name == "no Secret for auth" || tt.name == "slow past the timeout"
			if rep.Answered == unanswered {
				t.Errorf("answered %v, want %v", rep.Answered, !unanswered)
			}
			if len(rep.NotSent) != tt.notSent {
				t.Errorf("not sent: %v, want %d", rep.NotSent, tt.notSent)
			}
		})
	}
}

// Every violation of one answer is reported: an undeclared full object is named with its
// index and kind beside whatever else is wrong with the answer, even where ork's decoder
// stops at the first problem.
func TestEveryViolationOfAnAnswerIsReported(t *testing.T) {
	sts := map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db"}}
	undeclared := v{"create", CheckManaged, "$.resources[1]",
		`resources[1]: StatefulSet "db": type statefulsets.apps is not declared in managedResources`}
	dep := func(extra map[string]any) map[string]any {
		e := map[string]any{"type": "deployment", "fields": map[string]any{"name": "web", "image": "nginx:1.27"}}
		for k, x := range extra {
			e[k] = x
		}
		return e
	}
	tests := []struct {
		name string
		edit func(a map[string]any)
		want []v // create's violations, in order
	}{
		{"an entry the schema rejects", func(a map[string]any) { a["resources"] = []any{dep(map[string]any{"bogus": 1}), sts} },
			[]v{{"create", CheckBuild, "$.resources[0].bogus", `resources[0] (deployment): field "bogus": unknown field`}, undeclared}},
		{"an entry that is no object", func(a map[string]any) { a["resources"] = []any{"web", sts} },
			[]v{{"create", CheckDecoder, "$.resources[0]", "resources[0] is a string, want an object"}, undeclared}},
		{"an unknown result", func(a map[string]any) { a["result"], a["resources"] = "done", []any{dep(nil), sts} },
			[]v{{"create", CheckDecoder, "$.result", `unknown result "done"`}, undeclared}},
		{"an invalid requeueAfter", func(a map[string]any) { a["requeueAfter"], a["resources"] = "soon", []any{dep(nil), sts} },
			[]v{{"create", CheckDecoder, "$.requeueAfter", `invalid requeueAfter "soon"`}, undeclared}},
		{"an unknown top-level field", func(a map[string]any) { a["Status"], a["resources"] = map[string]any{}, []any{dep(nil), sts} },
			[]v{{"create", CheckDecoder, "$.Status", `unknown field "Status"`}, undeclared}},
		{"a misspelt intent type", func(a map[string]any) {
			a["resources"] = []any{map[string]any{"type": "deploymnet", "fields": map[string]any{"name": "web", "image": "nginx"}}, sts}
		}, []v{{"create", CheckBuild, "$.resources[0].type", `unknown type "deploymnet" (did you mean "deployment"?)`}, undeclared}},
		{"an intent type near none", func(a map[string]any) {
			a["resources"] = []any{map[string]any{"type": "pod", "fields": map[string]any{"name": "web"}}, sts}
		}, []v{{"create", CheckBuild, "$.resources[0].type", `unknown type "pod" (known types: configmap, cronjob, custom, daemonset, deployment,`}, undeclared}},
		{"two bad entries and an undeclared one", func(a map[string]any) {
			f := dep(nil)
			f["fields"].(map[string]any)["imagee"] = "x"
			a["resources"] = []any{map[string]any{"type": "Services", "fields": map[string]any{"name": "s", "port": 80}}, sts, f}
		}, []v{
			{"create", CheckBuild, "$.resources[0].type", `unknown type "Services" (did you mean "service"?)`},
			undeclared,
			{"create", CheckBuild, "$.resources[2].fields.imagee", `field "imagee": unknown field (did you mean "image"?)`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(reconciler(func(_, a map[string]any) { tt.edit(a) }))
			t.Cleanup(srv.Close)
			set, opts := example(t)
			opts.Endpoint = srv.URL
			rep, err := Run(t.Context(), set, opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Conformant || !rep.Answered {
				t.Fatalf("conformant %v, answered %v: want violations of an answered check", rep.Conformant, rep.Answered)
			}
			var got []v
			for _, x := range rep.Violations {
				if x.Request == "create" {
					got = append(got, v{x.Request, x.Check, x.Path, x.Message})
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("create's violations:\n%s\nwant %d", dump(rep.Violations), len(tt.want))
			}
			for i, w := range tt.want {
				if g := got[i]; g.check != w.check || g.path != w.path || !strings.Contains(g.msg, w.msg) {
					t.Errorf("violation %d: %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

// A reconciler that scales up whatever it finds fails the second round only.
func TestNonIdempotentAnswerFailsTheSecondRound(t *testing.T) {
	srv := httptest.NewServer(reconciler(func(req, a map[string]any) {
		children, _ := req["prepared"].(map[string]any)["children"].(map[string]any)
		deps, _ := children["deployment"].(map[string]any)
		if dep, ok := deps["my-webapp"].(map[string]any); ok {
			spec := dep["spec"].(map[string]any)
			f := a["resources"].([]any)[0].(map[string]any)["fields"].(map[string]any)
			f["replicas"] = spec["replicas"].(float64) + 1
		}
	}))
	t.Cleanup(srv.Close)
	set, opts := example(t)
	opts.Endpoint = srv.URL
	rep, err := Run(t.Context(), set, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Conformant || len(rep.Violations) != 3 {
		t.Fatalf("want 3 violations (one per trigger of round 2), got:\n%s", dump(rep.Violations))
	}
	got := rep.Violations[0]
	want := Violation{Severity: Error, Request: "create, children sent back", Path: "$.resources", Check: CheckStability,
		Message: "the answer changed once its own children were sent back: ~ deployments/my-webapp: spec.replicas was 2, now 3"}
	got.Hint = ""
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("violation (-want +got):\n%s", d)
	}
	if r := rep.Requests[3]; r.Stable == nil || *r.Stable {
		t.Errorf("request %s: stable %v, want false", r.Name, r.Stable)
	}
}

func TestDeleteAnswerWithResourcesIsAWarning(t *testing.T) {
	srv := httptest.NewServer(reconciler(nil)) // answers resources even while deleting
	t.Cleanup(srv.Close)
	set, opts := example(t)
	opts.Endpoint, opts.IncludeDelete = srv.URL, true
	rep, err := Run(t.Context(), set, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Conformant || len(rep.Violations) != 1 || rep.Violations[0].Severity != Warning || rep.Violations[0].Request != "delete" {
		t.Fatalf("want conformant with one warning on delete, got:\n%s", dump(rep.Violations))
	}
}

func TestUnreachableEndpointStopsTheCheck(t *testing.T) {
	srv := httptest.NewServer(reconciler(nil))
	srv.Close() // nothing listens there any more
	set, opts := example(t)
	opts.Endpoint = srv.URL
	rep, err := Run(t.Context(), set, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 1 || rep.Violations[0].Check != CheckHTTP || !strings.Contains(rep.Violations[0].Message, "connection refused") {
		t.Fatalf("violations:\n%s", dump(rep.Violations))
	}
	if rep.Answered {
		t.Errorf("answered, want not: nothing listens")
	}
	if d := cmp.Diff([]string{"update", "resync"}, rep.NotSent); d != "" {
		t.Errorf("not sent (-want +got):\n%s", d)
	}
}

func TestEveryRequestCarriesDryRun(t *testing.T) {
	seen := make(chan any, 16)
	srv := httptest.NewServer(reconciler(func(req, _ map[string]any) {
		seen <- req["prepared"].(map[string]any)["dryRun"]
	}))
	t.Cleanup(srv.Close)
	set, opts := example(t)
	opts.Endpoint = srv.URL
	if _, err := Run(t.Context(), set, opts); err != nil {
		t.Fatal(err)
	}
	close(seen)
	n := 0
	for d := range seen {
		n++
		if d != true {
			t.Errorf("request %d: prepared.dryRun = %v", n, d)
		}
	}
	if n != 6 {
		t.Errorf("%d requests, want 6", n)
	}
}

func TestRunRejectsWhatCannotBeChecked(t *testing.T) {
	set, opts := example(t)
	website, _, err := katalog.Load([]string{"../../examples/website/katalog.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  *katalog.Set
		crd  string
		want string
	}{
		{"unknown CRD", set, "nope", `no CRD "nope" in the Katalog`},
		{"declarative CRD", website, "website", `CRD "website" has no reconcile.remote to check`},
	}
	for _, tt := range tests {
		o := opts
		o.CRD = tt.crd
		if _, err := Run(t.Context(), tt.set, o); err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func dump(vs []Violation) string {
	var b strings.Builder
	for _, x := range vs {
		fmt.Fprintf(&b, "  %s %s [%s] %s: %s\n", x.Severity, x.Request, x.Check, x.Path, x.Message)
	}
	return b.String()
}

// An entry that builds but that ork cannot place (here a controller ownerReference of the
// reconciler's own) is named at its index with a hint about placement, not about the
// intent types' fields.
func TestUnplaceableEntryGetsAPlacementHint(t *testing.T) {
	srv := httptest.NewServer(reconciler(func(_, a map[string]any) {
		a["resources"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{
			"name": "web", "ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "boss", "uid": "b", "controller": true}},
		}}}
	}))
	t.Cleanup(srv.Close)
	set, opts := example(t)
	opts.Endpoint = srv.URL + "/reconcile"
	rep, err := Run(t.Context(), set, opts)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, x := range rep.Violations {
		if x.Request != "create" || x.Path != "$.resources[0]" {
			continue
		}
		found = true
		if x.Hint != placementHint || !strings.Contains(x.Message, "controller: true") {
			t.Errorf("violation %+v: want the controller reference named, with the placement hint", x)
		}
	}
	if !found || rep.Requests[0].Reason != "InvalidResource" {
		t.Errorf("no violation at $.resources[0] (reason %s):\n%s", rep.Requests[0].Reason, dump(rep.Violations))
	}
}
