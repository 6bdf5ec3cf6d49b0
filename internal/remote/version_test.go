package remote

import (
	"context"
	"net/http"
	"strings"
	"testing"

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
			r := mustNew(t, crd(srv.URL, func(rem *katalog.Remote) { rem.Args = map[string]any{"tier": "{{ .spec.tier }}"} }), Options{})
			obj := webapp()
			_, x, err := r.Call(context.Background(), Request{Key: "default/web", Object: obj, Trigger: TriggerCreate, Attempt: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := ReconcilerVersion(x); got != tt.want {
				t.Errorf("ReconcilerVersion = %q, want %q", got, tt.want)
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
