package run_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/orkspace/ork/internal/run/runtest"
)

// An engine that has run and stopped leaves no goroutine behind, apart from these, each
// owned by something that outlives one engine by design.
var leakAllowlist = []goleak.Option{
	// client-go caches TLS transports process-wide (k8s.io/client-go/transport's tlsCache),
	// so the HTTP/2 connections to the apiserver, and their read loops, are shared with every
	// later client of the same config: the test's own clients use them too.
	goleak.IgnoreTopFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
	goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*clientConnReadLoop).run"),
	// The loopback test reconciler's server side of ork's connection ends when the test's
	// httptest.Server closes, after this check.
	goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
	goleak.IgnoreAnyFunction("net/http.(*connReader).backgroundRead"),
}

// 12 Leaks: not parallel, because goleak sees every goroutine of the process.
func TestEngineLeavesNoGoroutineBehind(t *testing.T) {
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, runtest.OKWithChildren)
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Resync: "1s"})
	baseline := goleak.IgnoreCurrent()
	eng := f.NewEngine(set, nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	f.Eventually("engine ready", func() (bool, error) { return eng.Ready(), nil })
	f.CreateCR("web", map[string]any{})
	f.WaitReady("web", "True")
	f.PatchSpec("web", `{"spec":{"v":2}}`)
	ep.NextMatching(t, "the update", func(c call) bool { return c.Trigger == "update" })
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, append(leakAllowlist, baseline)...)
}
