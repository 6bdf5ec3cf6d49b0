package run_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/orkspace/ork/internal/run/runtest"
)

// The related watches (a type's metadata, a Secret by name) stop with the engine. Not
// parallel: goleak sees every goroutine of the process.
func TestRelatedWatchesLeaveNoGoroutineBehind(t *testing.T) {
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: `              related:
                - {as: config, kind: ConfigMap, name: "{{ .metadata.name }}-config"}
                - {as: creds, kind: Secret, name: reconciler-token, allowSecrets: true}
`})
	baseline := goleak.IgnoreCurrent()
	eng := f.NewEngine(set, nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	f.Eventually("engine ready", func() (bool, error) { return eng.Ready(), nil })
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, append(leakAllowlist, baseline)...)
}
