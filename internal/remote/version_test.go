package remote

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/exchange"
	"github.com/orkspace/ork/internal/katalog"
)

func TestReconcilerVersionFromTheResponseHeader(t *testing.T) {
	tests := []struct {
		name, header, want string
	}{
		{"named", "1.4.2", "1.4.2"},
		{"not named", "", ""},
		{"too long: cut", strings.Repeat("v", 200), strings.Repeat("v", maxVersion)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			if tt.header != "" {
				headers = []string{ReconcilerVersionHeader, tt.header}
			}
			srv, _ := newEndpoint(t, answer(http.StatusOK, `{"result":"ok"}`, headers...))
			var recorded []exchange.Exchange
			r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) { rem.Args = map[string]any{"tier": "{{ .spec.tier }}"} }),
				Options{Record: func(x exchange.Exchange) { recorded = append(recorded, x) }})
			obj := webapp()
			_, x, err := r.Call(context.Background(), Request{Key: "default/web", Object: obj, Trigger: TriggerCreate, Attempt: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := ReconcilerVersion(x); got != tt.want {
				t.Errorf("ReconcilerVersion = %q, want %q", got, tt.want)
			}
			if len(recorded) != 1 || recorded[0].ResponseHeader.Get(ReconcilerVersionHeader) != tt.header {
				t.Errorf("the recorded exchange's response header %v, want %s %q kept", recorded, ReconcilerVersionHeader, tt.header)
			}
			args, err := r.RenderArgs(obj)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := args.(map[string]any)["tier"]; !ok {
				t.Errorf("RenderArgs = %v: want the rendered args", args)
			}
		})
	}
}
