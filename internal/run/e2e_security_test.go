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
)

// 12 Security: the auth token never shows in ork's logs (debug level), Events, the CR's
// status, the metrics or the decision trace, even when the reconciler echoes it back raw,
// JSON-escaped, or so that it straddles the point where a message is cut.
func TestTokenNeverLeaksAnywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const token = "tok/en<&>9f8e7d6c5b4a3210"
	sec, err := env.Clientset.CoreV1().Secrets(f.ns).Get(t.Context(), "reconciler-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec.Data = map[string][]byte{"token": []byte(token)}
	if _, err := env.Clientset.CoreV1().Secrets(f.ns).Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ep := newEndpoint(t, func(c call) response {
		got := strings.TrimPrefix(c.header.Get("Authorization"), "Bearer ")
		escaped, _ := json.Marshal(map[string]string{"message": "bad token " + got})
		switch c.crName() {
		case "echo-500":
			return response{status: http.StatusInternalServerError, body: escaped}
		case "echo-401":
			return response{status: http.StatusUnauthorized, body: []byte("you sent " + got)}
		case "echo-cut":
			return jsonResponse(map[string]any{"result": "error", "error": strings.Repeat("x", 1018) + got})
		}
		return jsonResponse(map[string]any{"result": "error", "error": "rejected " + got})
	})
	eng := f.start(f.writeKatalog(remoteSpec{endpoint: ep.srv.URL}), nil, func(o *run.Options) { o.DebugDecisions = true })
	names := []string{"echo-500", "echo-401", "echo-cut", "echo-error"}
	for _, name := range names {
		f.createCR(name, map[string]any{})
	}
	for _, name := range names {
		f.waitReady(name, "False")
		f.waitEvent(name, "Warning", "ReconcileError")
	}
	var seen strings.Builder
	seen.WriteString(f.logs.String())
	for _, name := range names {
		b, _ := json.Marshal(f.getCR(name).Object)
		seen.Write(b)
		for _, e := range f.events(name) {
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
		res, err := http.Get(fmt.Sprintf("http://%s/debug/decisions/app/%s/%s", eng.HealthAddr(), f.ns, name))
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
