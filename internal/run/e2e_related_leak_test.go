package run_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

// The related watches (a type's metadata, a Secret by name) stop with the engine. Not
// parallel: goleak sees every goroutine of the process.
func TestRelatedWatchesLeaveNoGoroutineBehind(t *testing.T) {
	f := newFixture(t)
	ep := newEndpoint(t, okWithChildren)
	set := f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, payload: `              related:
                - {as: config, kind: ConfigMap, name: "{{ .metadata.name }}-config"}
                - {as: creds, kind: Secret, name: reconciler-token, allowSecrets: true}
`})
	baseline := goleak.IgnoreCurrent()
	eng := newEngine(t, set, nil, f)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	f.eventually("engine ready", func() (bool, error) { return eng.Ready(), nil })
	f.createCR("web", map[string]any{})
	f.waitReady("web", "True")
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, append(leakAllowlist, baseline)...)
}
