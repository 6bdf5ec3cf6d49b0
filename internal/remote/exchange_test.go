package remote

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
)

func TestDryRunIsSentOnlyWhenAsked(t *testing.T) {
	tests := []struct {
		name   string
		dryRun bool
		want   any
	}{
		{"ork run leaves it out", false, nil},
		{"remote check sends true", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := newEndpoint(t, answer(200, `{}`))
			r := mustNew(t, crd(srv.URL, nil), Options{})
			req := Request{Key: "default/my-webapp", Object: webapp(), Trigger: TriggerCreate, Attempt: 1, DryRun: tt.dryRun}
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			prepared := decode(t, next(t, reqs).body)["prepared"].(map[string]any)
			got, present := prepared["dryRun"]
			if tt.want == nil && present {
				t.Errorf("prepared.dryRun = %v, want it absent", got)
			}
			if tt.want != nil && got != tt.want {
				t.Errorf("prepared.dryRun = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRecordGetsEachExchangeWithoutTheToken(t *testing.T) {
	const token = "s3cr3t-token"
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus int
		wantReason string
		wantBody   string
	}{
		{"ok", answer(200, `{"result":"ok","error":"echo s3cr3t-token"}`, "Content-Type", "application/json", "X-Other", "dropped"),
			200, ReasonReconcileSucceeded, `{"result":"ok","error":"echo [REDACTED]"}`},
		{"unknown result", answer(200, `{"result":"done"}`), 200, ReasonInvalidRemoteResult, `{"result":"done"}`},
		{"throttled", answer(429, "slow down", "Retry-After", "3"), 429, ReasonRemoteThrottled, "slow down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newEndpoint(t, tt.handler)
			var got []exchange.Exchange
			sec := newSecrets("default/tok/token", token)
			c := crd(srv.URL+"/reconcile?x=1", func(rem *katalog.Remote) {
				rem.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "tok", Namespace: "default", Key: "token"}}
			})
			r := mustNew(t, c, Options{Secrets: sec, Record: func(x exchange.Exchange) { got = append(got, x) }})
			_, returned, _ := r.Call(context.Background(), Request{Key: "default/my-webapp", Object: webapp(), Trigger: TriggerResync, Attempt: 2})
			if len(got) != 1 {
				t.Fatalf("Record called %d times, want 1", len(got))
			}
			x := got[0]
			if x.Key != "default/my-webapp" || x.Trigger != "resync" || x.Attempt != 2 || x.StatusCode != tt.wantStatus {
				t.Errorf("exchange %s %s attempt %d status %d", x.Key, x.Trigger, x.Attempt, x.StatusCode)
			}
			if x.Outcome.Reason != tt.wantReason {
				t.Errorf("outcome reason %q, want %q (%s)", x.Outcome.Reason, tt.wantReason, x.Outcome.Message)
			}
			if string(x.Response) != tt.wantBody {
				t.Errorf("response %q, want %q", x.Response, tt.wantBody)
			}
			if x.RequestHeader.Get("Authorization") != "" || x.RequestHeader.Get("User-Agent") == "" {
				t.Errorf("request header %v: want User-Agent and no Authorization", x.RequestHeader)
			}
			if x.ResponseHeader.Get("X-Other") != "" {
				t.Errorf("response header %v: only Content-Type, Retry-After and Ork-Reconciler-Version are kept", x.ResponseHeader)
			}
			if strings.Contains(x.URL, "x=1") || !strings.HasSuffix(x.URL, "/reconcile?…") {
				t.Errorf("URL %q keeps its query", x.URL)
			}
			if x.Time.IsZero() || x.Duration < 0 || !strings.Contains(string(x.Request), `"key":"default/my-webapp"`) {
				t.Errorf("time %v, duration %v, request %s", x.Time, x.Duration, x.Request)
			}
			if returned.Key != x.Key || string(returned.Response) != string(x.Response) {
				t.Errorf("Call returned %+v, Record got %+v", returned, x)
			}
		})
	}
}

func TestRecordIsNotCalledWhenNothingWasSent(t *testing.T) {
	called := false
	c := crd("http://127.0.0.1:1/reconcile", func(rem *katalog.Remote) {
		rem.Auth = &katalog.Auth{SecretRef: &katalog.SecretKeyRef{Name: "missing", Namespace: "default", Key: "token"}}
	})
	r := mustNew(t, c, Options{Secrets: newSecrets(), Record: func(exchange.Exchange) { called = true }})
	_, x, err := r.Call(context.Background(), Request{Key: "default/my-webapp", Object: webapp(), Trigger: TriggerCreate, Attempt: 1})
	if err == nil || called || !x.Time.IsZero() {
		t.Errorf("err %v, Record called %v, exchange time %v: want an auth error and no exchange", err, called, x.Time)
	}
}

func TestRecordedTimeoutHasNoStatus(t *testing.T) {
	release := make(chan struct{})
	srv, _ := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		select { // hold the answer until ork gives up (or the test ends)
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	c := crd(srv.URL, func(rem *katalog.Remote) { rem.Timeout = "50ms" })
	var got exchange.Exchange
	r := mustNew(t, c, Options{Record: func(x exchange.Exchange) { got = x }})
	_, err := r.Reconcile(context.Background(), Request{Key: "default/my-webapp", Object: webapp(), Trigger: TriggerCreate, Attempt: 1})
	if err == nil || got.StatusCode != 0 || got.Outcome.Reason != ReasonRemoteTimeout || got.Duration <= 0 {
		t.Errorf("err %v, exchange status %d reason %q duration %v", err, got.StatusCode, got.Outcome.Reason, got.Duration)
	}
}
