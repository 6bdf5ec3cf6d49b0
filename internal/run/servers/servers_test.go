package servers

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// /healthz and /readyz answer what their judges say, a ready note included, on the one
// listener they share with /metrics when the addresses are equal.
func TestProbesAnswerTheirJudges(t *testing.T) {
	var live, ready error
	note := "standby: not the leader"
	s, err := Start(Options{HealthAddr: "127.0.0.1:0", Live: func() error { return live },
		Ready: func() (string, error) { return note, ready }, Registry: prometheus.NewRegistry(), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get("http://" + s.HealthAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, tc := range []struct {
		name, path  string
		live, ready error
		code        int
		body        string
	}{
		{"live", "/healthz", nil, nil, 200, "ok\n"},
		{"stuck", "/healthz", errors.New("stuck"), nil, 503, "stuck\n"},
		{"ready with a note", "/readyz", nil, nil, 200, "ok (standby: not the leader)\n"},
		{"not ready", "/readyz", nil, errors.New("informers not synced"), 503, "informers not synced\n"},
	} {
		live, ready = tc.live, tc.ready
		if code, body := get(tc.path); code != tc.code || body != tc.body {
			t.Errorf("%s: %s = %d %q, want %d %q", tc.name, tc.path, code, body, tc.code, tc.body)
		}
	}
}
