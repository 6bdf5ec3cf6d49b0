package run_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/run/runtest"
)

var soakCRs = flag.Int("soak-crs", 60, "custom resources of the soak test (the issue's soak: -soak-crs 1000)")

// 12 Soak: many CRs against a reconciler that fails one call in ten at random (a 500); every
// CR converges. Goroutines and heap are reported before, while running and after the engine
// stopped (process-wide: other tests run beside it; TestEngineLeavesNoGoroutineBehind is the
// leak check).
func TestSoakWithRandomFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(1, 2))
	failing := func() bool { mu.Lock(); defer mu.Unlock(); return rnd.IntN(10) == 0 }
	ep := runtest.NewEndpoint(t, func(c call) response {
		if failing() {
			return response{Status: http.StatusInternalServerError, Body: []byte("random failure")}
		}
		return runtest.OKWithChildren(c)
	})
	before := snapshot()
	eng := f.NewEngine(f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL()}), nil)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	f.Eventually("engine ready", func() (bool, error) { return eng.Ready(), nil })
	start := time.Now()
	for i := range *soakCRs {
		f.CreateCR(fmt.Sprintf("soak-%d", i), map[string]any{})
	}
	// A bound that grows with the number of CRs: 10% of calls fail and back off.
	bound := max(30*time.Second, time.Duration(*soakCRs)*150*time.Millisecond)
	f.EventuallyWithin(bound, fmt.Sprintf("all %d CRs Ready", *soakCRs), func() (bool, error) {
		list, err := f.CRs().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready, notReady := 0, ""
		for i := range list.Items {
			if c := runtest.ReadyCondition(&list.Items[i]); c != nil && c["status"] == "True" {
				ready++
			} else if notReady == "" {
				notReady = fmt.Sprintf("%s: Ready %v", list.Items[i].GetName(), c)
			}
		}
		if ready == *soakCRs {
			return true, nil
		}
		return false, fmt.Errorf("%d of %d Ready; first not Ready: %s", ready, *soakCRs, notReady)
	})
	converged := time.Since(start)
	during := snapshot()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	after := snapshot()
	t.Logf("soak: %d CRs converged in %s with 10%% of calls failing; goroutines %d before, %d running, %d after; heap %d MiB before, %d running, %d after; RSS %d MiB before, %d running, %d after",
		*soakCRs, converged.Round(time.Millisecond), before.goroutines, during.goroutines, after.goroutines,
		before.heapMiB, during.heapMiB, after.heapMiB, before.rssMiB, during.rssMiB, after.rssMiB)
}

type usage struct{ goroutines, heapMiB, rssMiB int }

func snapshot() usage {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return usage{goroutines: runtime.NumGoroutine(), heapMiB: int(m.HeapInuse >> 20), rssMiB: residentMiB()}
}

// residentMiB is the process's resident set from /proc (Linux); -1 elsewhere.
func residentMiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				return -1
			}
			return kb >> 10
		}
	}
	return -1
}
