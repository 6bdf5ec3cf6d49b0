package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orkspace/ork/sdk/go/reconciler"
	"github.com/orkspace/ork/sdk/go/reconcilertest"
)

// recording was written by `ork simulate --remote --record` against this reconciler
// (examples/remote's Katalog and CR): what ork saw it answer.
const recording = "testdata/recording"

func handler(t *testing.T, fn reconciler.Func) *reconciler.Handler {
	t.Helper()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("t0ken"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := newHandler(fn, file, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestReplayOfTheRecordingPasses(t *testing.T) {
	rep := reconcilertest.AssertReplay(t, handler(t, Reconcile), recording, reconcilertest.Options{Token: "t0ken"})
	if rep.Compared == 0 {
		t.Fatal("nothing compared")
	}
}

// A change of the logic shows in the replay, named by the field path it changed.
func TestReplayCatchesAChangedLogic(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(reconciler.Result) reconciler.Result
		want   string
	}{
		{"more replicas", func(r reconciler.Result) reconciler.Result {
			f := r.Resources[0].Intent.Fields.(reconciler.DeploymentFields)
			*f.Replicas++
			r.Resources[0] = reconciler.Deployment(f)
			return r
		}, "objects[apps/v1 Deployment default/my-webapp].fields.replicas"},
		{"another phase", func(r reconciler.Result) reconciler.Result {
			r.Status["phase"] = "Running"
			return r
		}, "status.phase"},
		{"service dropped", func(r reconciler.Result) reconciler.Result {
			return r.WithResources(r.Resources[0])
		}, "objects[v1 Service default/my-webapp-svc]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := func(ctx context.Context, req *reconciler.PreparedRequest) (reconciler.Result, error) {
				r, err := Reconcile(ctx, req)
				return tc.change(r), err
			}
			rep, err := reconcilertest.Replay(handler(t, changed), recording, reconcilertest.Options{Token: "t0ken"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Divergent != rep.Compared || rep.Compared == 0 {
				t.Errorf("%d of %d compared diverge, want all", rep.Divergent, rep.Compared)
			}
			for _, r := range rep.Results {
				if !slices.Equal(r.Divergences, []string{tc.want}) {
					t.Errorf("%s: %q, want %q", r.File, r.Divergences, tc.want)
				}
			}
		})
	}
}

func TestRunNeedsATokenFile(t *testing.T) {
	var stderr bytes.Buffer
	err := run(t.Context(), nil, func(string) string { return "" }, &stderr)
	if err == nil || !strings.Contains(err.Error(), "RECONCILER_TOKEN_FILE") {
		t.Errorf("run without RECONCILER_TOKEN_FILE: %v", err)
	}
}

func TestRunReturnsOnceItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stderr bytes.Buffer
	env := func(string) string { return "/nonexistent/token" }
	if err := run(ctx, []string{"--addr", "127.0.0.1:0"}, env, &stderr); err != nil {
		t.Errorf("run: %v\n%s", err, stderr.String())
	}
}
