package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/remotecheck"
)

const (
	exampleKatalog = "../../examples/remote/katalog.yaml"
	exampleSecret  = "../../examples/remote/secret.yaml"
)

// endpoint serves body with status 200 to every request.
func endpoint(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/reconcile"
}

const goodAnswer = `{"result":"ok","resources":[{"type":"deployment","fields":{"name":"my-webapp","image":"nginx:1.27"}}]}`

// status answers every request with code and body.
func status(t *testing.T, code int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/reconcile"
}

// closed is the URL of a server that no longer listens.
func closed(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL + "/reconcile"
}

func TestRemoteCheckExitCodes(t *testing.T) {
	good, bad := endpoint(t, goodAnswer), endpoint(t, `{"result":"done"}`)
	unauthorized, gone := status(t, http.StatusUnauthorized, "no token"), closed(t)
	// An undeclared full object beside an unknown result: both reported.
	twoFaults := endpoint(t, `{"result":"done","resources":[{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once"}}]}`)
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   string
		noStdout bool
	}{
		{"conformant", []string{"--secrets", exampleSecret, "--endpoint", good}, 0,
			[]string{"webapp default/my-webapp → " + good + " ", "  create, children sent back  200", "ok: deployments/my-webapp (stable)", "conformant: 6 requests, 0 violations, 0 warnings"},
			"next: simulate it cycle by cycle: ork simulate -f " + exampleKatalog + " --remote --secrets " + exampleSecret + "\n", false},
		{"violations", []string{"--secrets", exampleSecret, "--endpoint", bad}, 1,
			[]string{`  create  200`, `InvalidRemoteResult`, `error $.result [decoder] unknown result "done" (want "ok", "requeue", "pending" or "error")`,
				`hint: answer "ok", "requeue", "pending" or "error"`, "the same 1 violation as create", "not conformant: 3 requests, 3 violations, 0 warnings"}, "", false},
		{"a 401 violates the contract", []string{"--secrets", exampleSecret, "--endpoint", unauthorized}, 1,
			[]string{"  create  401", "error [http] POST " + unauthorized + ": HTTP 401 Unauthorized", "not conformant: 3 requests, 3 violations, 0 warnings"}, "", false},
		{"every violation of an answer", []string{"--secrets", exampleSecret, "--endpoint", twoFaults}, 1,
			[]string{`error $.result [decoder] unknown result "done"`,
				`error $.resources[0] [managedResources] resources[0]: Job "once": type jobs.batch is not declared in managedResources`,
				"the same 2 violations as create", "not conformant: 3 requests, 6 violations, 0 warnings"}, "", false},
		{"nothing listens", []string{"--secrets", exampleSecret, "--endpoint", gone}, 2,
			[]string{"error [http] POST " + gone + ": dial tcp", "not sent: update; resync", "not checked (no request got an HTTP answer): 1 request, 1 violation, 0 warnings"}, "", false},
		{"no Secret for auth", []string{"--endpoint", good}, 2,
			[]string{`error [request] read auth secret default/my-reconciler-token key "token": no Secret`, "not checked (no request got an HTTP answer)"}, "", false},
		{"no CR file", []string{"--cr", "nope.yaml"}, 2, nil, "--cr: open nope.yaml", true},
		{"no Katalog file", []string{"-f", "nope.yaml"}, 2, nil, "load katalog: unreadable file: open nope.yaml", true},
		{"no CR kind in --cr", []string{"--cr", exampleSecret}, 2, nil, "--cr: " + exampleSecret + " holds no WebApp to send", true},
		{"unknown CRD", []string{"--crd", "webap"}, 2, nil, `--crd: no CRD "webap" in the Katalog (did you mean "webapp"?)`, true},
		{"missing secrets file", []string{"--secrets", "nope.yaml"}, 2, nil, "--secrets: open nope.yaml", true},
		{"bad output", []string{"-o", "yaml"}, 2, nil, `unknown output format "yaml"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runOrk(t, append([]string{"remote", "check", "-f", exampleKatalog}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if tt.stderr != "" && !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.stderr)
			}
			if tt.noStdout && out != "" {
				t.Errorf("stdout %q, want none on a usage error", out)
			}
		})
	}
}

func TestRemoteCheckJSON(t *testing.T) {
	code, out, errOut := runOrk(t, "remote", "check", "-f", exampleKatalog, "--secrets", exampleSecret,
		"--endpoint", endpoint(t, goodAnswer), "--include-delete", "-o", "json")
	if code != 0 { // the answer to delete carries resources: a warning, still conformant
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep remotecheck.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, out)
	}
	if !rep.Conformant || !rep.Answered || len(rep.Requests) != 7 || len(rep.Violations) != 1 || rep.Violations[0].Severity != remotecheck.Warning {
		t.Errorf("report: conformant %v, %d requests, violations %+v", rep.Conformant, len(rep.Requests), rep.Violations)
	}
}

// -o json carries the report whatever the exit code: answered false when nothing answered.
func TestRemoteCheckJSONUnanswered(t *testing.T) {
	code, out, errOut := runOrk(t, "remote", "check", "-f", exampleKatalog, "--secrets", exampleSecret,
		"--endpoint", closed(t), "-o", "json")
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, errOut)
	}
	var rep remotecheck.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not the report: %v\n%s", err, out)
	}
	if rep.Answered || rep.Conformant || len(rep.Violations) != 1 || rep.Violations[0].Check != remotecheck.CheckHTTP {
		t.Errorf("report: answered %v, conformant %v, violations %+v", rep.Answered, rep.Conformant, rep.Violations)
	}
}

func TestRemoteCheckNeedsARemoteCRD(t *testing.T) {
	code, _, errOut := runOrk(t, "remote", "check", "-f", "../../examples/website/katalog.yaml")
	if code != 2 || !strings.Contains(errOut, "the Katalog has no CRD with reconcile.remote") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runOrk(t, "remote", "check", "-f", "../../examples/website/katalog.yaml", "--crd", "website")
	if code != 2 || !strings.Contains(errOut, `CRD "website" has no reconcile.remote (it uses the declarative reconciler: try ork simulate)`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// --candidate lists, under each request, where the candidate's answer differs (paths only),
// and sums up; the exit code is the checked reconciler's.
func TestRemoteCheckCandidate(t *testing.T) {
	stable := endpoint(t, goodAnswer)
	cand := endpoint(t, `{"result":"ok","resources":[{"type":"deployment","fields":{"name":"my-webapp","image":"registry.example/s3cret:tag"}}]}`)
	code, out, errOut := runOrk(t, "remote", "check", "-f", exampleKatalog, "--secrets", exampleSecret, "--endpoint", stable, "--candidate", cand)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("the candidate's value is printed:\n%s", out)
	}
	if n := strings.Count(out, "candidate differs at objects[apps/v1 Deployment default/my-webapp].spec.template.spec.containers[0].image"); n != 6 {
		t.Errorf("%d requests shown differing at the image; want all 6:\n%s", n, out)
	}
	if !strings.Contains(out, "candidate "+cand+": 6 of 6 requests answered differently") {
		t.Errorf("no summary line:\n%s", out)
	}
	code, out, _ = runOrk(t, "remote", "check", "-f", exampleKatalog, "--secrets", exampleSecret, "--endpoint", stable, "--candidate", status(t, 500, "boom"))
	if code != 0 || !strings.Contains(out, "candidate RemoteHTTPError") {
		t.Errorf("a failing candidate: exit %d\n%s", code, out)
	}
}

// A "pending" answer is polled with prepared.operation after its pollAfter, each poll a line
// of its own; once --operation-wait is spent, the next operation is a warning that names the
// bound, and the check stays conformant.
func TestRemoteCheckFollowsPending(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prepared struct {
				Operation *struct{ ID string } `json:"operation"`
			} `json:"prepared"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if req.Prepared.Operation == nil {
			_, _ = io.WriteString(w, `{"result":"pending","operation":{"id":"db-1","pollAfter":"1s","progress":40,"message":"creating"}}`)
			return
		}
		_, _ = io.WriteString(w, goodAnswer)
	}))
	t.Cleanup(srv.Close)
	code, out, errOut := runOrk(t, "remote", "check", "-f", exampleKatalog, "--secrets", exampleSecret, "--endpoint", srv.URL, "--operation-wait", "1s")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, w := range []string{
		"  create                      200", `operation "db-1" pending (40%): creating, poll after 1s`,
		`  create, poll 1              200`, `ok: deployments/my-webapp (after 1s)`,
		`warning $.operation [operation] operation "db-1" still pending after waiting the bound of 1s (--operation-wait), 0 polls: creating (40%)`,
		"conformant: 7 requests, 0 violations, 5 warnings",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	code, _, errOut = runOrk(t, "remote", "check", "-f", exampleKatalog, "--operation-wait", "0s")
	if code != 2 || !strings.Contains(errOut, "--operation-wait 0s: want a positive duration") {
		t.Errorf("--operation-wait 0s: exit %d, %s", code, errOut)
	}
}
