package runtest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/testkit"
)

// NewEngine builds an engine for the fixture with test-sized backoff, logging into f.Logs
// and counting into a new f.Metrics; cfg nil means the admin config.
func (f *Fixture) NewEngine(set *katalog.Set, cfg *rest.Config, tune ...func(*run.Options)) *run.Engine {
	f.T.Helper()
	if cfg == nil {
		cfg = f.Env.Config
	}
	f.Metrics = run.NewMetrics()
	opts := run.Options{
		RESTConfig:      rest.CopyConfig(cfg),
		Namespace:       f.NS,
		BackoffBase:     100 * time.Millisecond,
		BackoffMax:      5 * time.Second,
		ShutdownTimeout: 10 * time.Second,
		HealthAddr:      "127.0.0.1:0",
		MetricsAddr:     "127.0.0.1:0", // the same string: one listener serves all three paths
		Logger:          slog.New(slog.NewTextHandler(f.Logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics:         f.Metrics,
	}
	for _, fn := range tune {
		fn(&opts)
	}
	eng, err := run.New(set, opts)
	if err != nil {
		f.T.Fatal(err)
	}
	return eng
}

// Start runs the engine in-process until the test ends and waits until it is ready.
func (f *Fixture) Start(set *katalog.Set, cfg *rest.Config, tune ...func(*run.Options)) *run.Engine {
	f.T.Helper()
	eng, _ := f.StartStoppable(set, cfg, tune...)
	return eng
}

// StartStoppable is Start that also returns the func that stops the engine and checks that
// it stopped cleanly, for restarts within a test; the end of the test stops it too.
func (f *Fixture) StartStoppable(set *katalog.Set, cfg *rest.Config, tune ...func(*run.Options)) (eng *run.Engine, stop func()) {
	f.T.Helper()
	eng = f.NewEngine(set, cfg, tune...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				f.T.Errorf("engine stopped with error: %v", err)
			}
		})
	}
	f.T.Cleanup(func() {
		stop()
		if f.T.Failed() {
			f.T.Logf("ork logs:\n%s", f.Logs.String())
		}
	})
	f.Eventually("engine ready", func() (bool, error) {
		select {
		case err := <-done:
			done <- err
			return false, fmt.Errorf("engine exited early: %v", err)
		default:
		}
		return eng.Ready(), nil
	})
	return eng, stop
}

// Eventually polls cond every 50ms for up to 30s: state in the apiserver converges within
// milliseconds, the bound only catches behaviour that never happens.
func (f *Fixture) Eventually(what string, cond func() (bool, error)) {
	f.T.Helper()
	f.EventuallyWithin(30*time.Second, what, cond)
}

// EventuallyWithin is Eventually with a bound of its own, for work that grows with a flag
// (the soak's number of CRs).
func (f *Fixture) EventuallyWithin(bound time.Duration, what string, cond func() (bool, error)) {
	f.T.Helper()
	testkit.Eventually(f.T, what, 50*time.Millisecond, bound, func(context.Context) (bool, error) {
		ok, err := cond()
		if err != nil && strings.HasPrefix(err.Error(), "engine exited") {
			return false, testkit.Permanent(err) // no wait brings an exited engine back
		}
		return ok, err
	})
}
