package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/golden"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/trace"
)

// traceServer serves the decisions of a short story: a create, a timeout, a recovery, and
// an object of the same name under another CRD.
func traceServer(t *testing.T) string {
	t.Helper()
	s := trace.NewStore(trace.Options{})
	k := trace.Key{CRD: "webapp", Namespace: "default", Name: "my-webapp"}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ms := func(n float64) trace.Duration { return trace.Duration(n * float64(time.Millisecond)) }
	s.Record(k, trace.Decision{Time: t0, Trigger: "create", Attempt: 1, Request: "sha256:1a2b3c4d5e6f7a8b9c0d",
		Result: "ok", Success: true, Reason: "ReconcileSucceeded", Message: "remote reconciler returned ok", Next: "done",
		Applies: []trace.Apply{
			{Ref: "deployments/my-webapp", Namespace: "default", Outcome: trace.Created},
			{Ref: "services/my-webapp-svc", Namespace: "default", Outcome: trace.Created},
		},
		Durations: trace.Durations{Remote: ms(12.34), Apply: ms(30.1), Status: ms(5), Total: ms(48.2)}})
	s.Record(k, trace.Decision{Time: t0.Add(time.Minute), Trigger: "update", Attempt: 1, Request: "sha256:ffee00112233445566",
		Target: "orkestra-system/spoke-eu-kubeconfig[kubeconfig]", Reason: "RemoteTimeout", Message: "POST http://127.0.0.1:8088/reconcile: no response within 30s", Next: "backoff",
		Durations: trace.Durations{Remote: trace.Duration(30 * time.Second), Total: trace.Duration(30*time.Second + 2*time.Millisecond)}})
	s.Record(k, trace.Decision{Time: t0.Add(time.Minute + 31*time.Second), Trigger: "requeue", Attempt: 2, Request: "sha256:ffee00112233445566",
		Result: "ok", Success: true, Reason: "ReconcileSucceeded", Next: "done",
		Applies: []trace.Apply{
			{Ref: "deployments/my-webapp", Namespace: "default", Outcome: trace.Updated},
			{Ref: "services/my-webapp-svc", Namespace: "default", Outcome: trace.Unchanged},
		},
		Durations: trace.Durations{Remote: ms(8), Apply: ms(11), Total: ms(20)}})
	s.Record(k, trace.Decision{Time: t0.Add(time.Minute + 31*time.Second + 5*time.Millisecond), Trigger: "requeue", Attempt: 2, Side: "shadow",
		Result: "ok", Success: true, Reason: "ReconcileSucceeded",
		Divergences: []string{"objects[apps/v1 Deployment default/my-webapp].spec.replicas", "status.phase"},
		Durations:   trace.Durations{Remote: ms(9), Total: ms(9)}})
	s.Record(trace.Key{CRD: "webapp", Namespace: "default", Name: "twin"}, trace.Decision{Time: t0, Trigger: "create", Reason: "ReconcileSucceeded", Success: true})
	s.Record(trace.Key{CRD: "database", Namespace: "default", Name: "twin"}, trace.Decision{Time: t0, Trigger: "create", Reason: "ReconcileSucceeded", Success: true})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestTraceTimeline(t *testing.T) {
	addr := traceServer(t)
	code, out, errOut := runOrk(t, "trace", "default/my-webapp", "--addr", addr)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden.Assert(t, filepath.Join("testdata", "trace", "timeline.golden"), []byte(out))

	code, withCRD, _ := runOrk(t, "trace", "webapp", "default/my-webapp", "--addr", addr)
	if code != 0 || withCRD != out {
		t.Errorf("with the CRD named: exit %d\n%s", code, withCRD)
	}
	code, js, _ := runOrk(t, "trace", "default/my-webapp", "--addr", addr, "-o", "json")
	var got trace.ObjectTrace
	if err := json.Unmarshal([]byte(js), &got); code != 0 || err != nil || len(got.Decisions) != 4 || got.CRD != "webapp" || got.Decisions[3].Side != "shadow" {
		t.Errorf("-o json: exit %d, %v, %+v", code, err, got)
	}
}

func TestTraceErrors(t *testing.T) {
	addr := traceServer(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"ambiguous name", []string{"default/twin"}, 2,
			"error: default/twin is an object of 2 CRDs (database, webapp): name the CRD: ork trace database default/twin"},
		{"no decisions", []string{"default/nope"}, 1,
			"error: default/nope: no decisions at " + addr + " (ork run keeps them only with --debug-decisions"},
		{"no decisions for the CRD", []string{"webapp", "default/nope"}, 1, "error: webapp default/nope: no decisions at"},
		{"nothing listening", []string{"default/my-webapp", "--addr", "127.0.0.1:1"}, 1,
			"connect: connection refused (is ork run serving decisions there? it needs --debug-decisions"},
		{"no argument", nil, 2, "error: ork trace takes [CRD] NAMESPACE/NAME, got 0 arguments"},
		{"bad reference", []string{"default/"}, 2, `error: "default/" is not NAMESPACE/NAME`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"trace"}, tt.args...)
			if !strings.Contains(strings.Join(tt.args, " "), "--addr") {
				args = append(args, "--addr", addr)
			}
			code, out, errOut := runOrk(t, args...)
			if code != tt.code || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q\nwant exit %d and %q", code, out, errOut, tt.code, tt.want)
			}
		})
	}
}

// The timeline is coloured on a terminal only.
func TestTraceColoursOnlyATerminal(t *testing.T) {
	addr := traceServer(t)
	for _, tty := range []bool{true, false} {
		t.Setenv("NO_COLOR", "")
		var out, errOut bytes.Buffer
		code := Main(context.Background(), []string{"trace", "default/my-webapp", "--addr", addr},
			output.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: tty})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if got := strings.Contains(out.String(), "\x1b["); got != tty {
			t.Errorf("terminal %v: escape codes %v", tty, got)
		}
	}
}
