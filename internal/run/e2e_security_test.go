package run_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// 12 Security: the auth token never shows in ork's logs (debug level), Events, the CR's
// status, the metrics or the decision trace, even when the reconciler echoes it back raw,
// JSON-escaped, or so that it straddles the point where a message is cut.
func TestTokenNeverLeaksAnywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const token = "tok/en<&>9f8e7d6c5b4a3210"
	sec, err := env.Clientset.CoreV1().Secrets(f.NS).Get(t.Context(), "reconciler-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data = map[string][]byte{"token": []byte(token)}
	if _, err := env.Clientset.CoreV1().Secrets(f.NS).Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ep := runtest.NewEndpoint(t, func(c call) response {
		got := strings.TrimPrefix(c.Header.Get("Authorization"), "Bearer ")
		escaped, _ := json.Marshal(map[string]string{"message": "bad token " + got})
		switch c.CRName() {
		case "echo-500":
			return response{Status: http.StatusInternalServerError, Body: escaped}
		case "echo-401":
			return response{Status: http.StatusUnauthorized, Body: []byte("you sent " + got)}
		case "echo-cut":
			return runtest.JSONResponse(map[string]any{"result": "error", "error": strings.Repeat("x", 1018) + got})
		}
		return runtest.JSONResponse(map[string]any{"result": "error", "error": "rejected " + got})
	})
	eng := f.Start(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil, func(o *run.Options) { o.DebugDecisions = true })
	names := []string{"echo-500", "echo-401", "echo-cut", "echo-error"}
	for _, name := range names {
		f.CreateCR(name, map[string]any{})
	}
	for _, name := range names {
		f.WaitReady(name, "False")
		f.WaitEvent(name, "Warning", "ReconcileError")
	}
	var seen strings.Builder
	seen.WriteString(f.Logs.String())
	for _, name := range names {
		b, _ := json.Marshal(f.GetCR(name).Object)
		seen.Write(b)
		for _, e := range f.Events(name) {
			fmt.Fprintln(&seen, e.Message)
		}
	}
	for _, path := range []string{"/metrics", "/debug/decisions/"} {
		res, err := http.Get("http://" + eng.HealthAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		seen.Write(b)
	}
	for _, name := range names {
		res, err := http.Get(fmt.Sprintf("http://%s/debug/decisions/app/%s/%s", eng.HealthAddr(), f.NS, name))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		seen.Write(b)
	}
	all := seen.String()
	for _, form := range []string{token, "tok/en", `tok\/en`, `\u003c\u0026\u003e9f8e`, "<&>9f8e"} {
		if strings.Contains(all, form) {
			t.Errorf("the token (as %q) shows in ork's logs, Events, status, metrics or trace", form)
		}
	}
	if !strings.Contains(all, "[REDACTED]") {
		t.Error("no [REDACTED] anywhere: the reconciler's echoes did not reach what this test scans")
	}
}
