package reconcilertest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/reconcilertest"
)

// post sends a request for namespace/name with trigger, as ork would, and checks the answer.
func post(t *testing.T, url, namespace, name, trigger string) {
	body, _ := json.Marshal(map[string]any{
		"object":   map[string]any{"metadata": map[string]any{"namespace": namespace, "name": name}},
		"prepared": map[string]any{"trigger": trigger},
	})
	res, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("status %d", res.StatusCode)
	}
}

// Two calls for one key in flight together are one overlap; a call for another key at the
// same time, and a call for the first key after both ended, are none. Each call keeps its
// key, trigger, start and end.
func TestEndpointRecordsOverlapsPerKey(t *testing.T) {
	entered := make(chan reconcilertest.Call, 10)
	release := make(chan struct{})
	ep := reconcilertest.NewEndpoint(t, func(c reconcilertest.Call) reconcilertest.Response {
		entered <- c
		<-release
		return reconcilertest.JSON(map[string]any{"result": "ok"})
	}, reconcilertest.EndpointOptions{})

	var wg sync.WaitGroup
	for _, r := range []struct{ ns, name, trigger string }{
		{"team", "a", "create"}, {"team", "a", "update"}, {"other", "a", "create"},
	} {
		wg.Go(func() { post(t, ep.URL(), r.ns, r.name, r.trigger) })
		<-entered // in flight before the next one is sent: the order of arrival is fixed
	}
	close(release)
	wg.Wait()
	post(t, ep.URL(), "team", "a", "resync") // after team/a's calls ended: no overlap

	calls := ep.Calls()
	type rec struct {
		Seq          int
		Key, Trigger string
	}
	var got []rec
	for _, c := range calls {
		got = append(got, rec{c.Seq, c.Key, c.Trigger})
		if c.End.IsZero() || c.End.Before(c.Start) {
			t.Errorf("call %d: start %v, end %v", c.Seq, c.Start, c.End)
		}
	}
	want := []rec{{0, "team/a", "create"}, {1, "team/a", "update"}, {2, "other/a", "create"}, {3, "team/a", "resync"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	overlaps := ep.Overlaps()
	if len(overlaps) != 1 {
		var pairs []string
		for _, o := range overlaps {
			pairs = append(pairs, fmt.Sprintf("%s #%d/#%d", o.Key, o.First.Seq, o.Second.Seq))
		}
		t.Fatalf("overlaps %q, want only team/a #0/#1", pairs)
	}
	if o := overlaps[0]; o.Key != "team/a" || o.First.Seq != 0 || o.Second.Seq != 1 || !o.Second.Start.Before(o.First.End) {
		t.Errorf("overlap = %s #%d [%v, %v] and #%d from %v; want team/a #0 and #1, the second starting before the first ended",
			o.Key, o.First.Seq, o.First.Start, o.First.End, o.Second.Seq, o.Second.Start)
	}
}

// A call that arrives after the previous one for its key was answered is no overlap, even
// when the caller sends it the moment it reads the answer.
func TestEndpointSequentialCallsDoNotOverlap(t *testing.T) {
	ep := reconcilertest.NewEndpoint(t, func(reconcilertest.Call) reconcilertest.Response {
		return reconcilertest.JSON(map[string]any{"result": "ok"})
	}, reconcilertest.EndpointOptions{})
	for range 50 {
		post(t, ep.URL(), "team", "a", "update")
	}
	if o := ep.Overlaps(); len(o) != 0 {
		t.Fatalf("%d overlaps of strictly sequential calls", len(o))
	}
}

// A request failing the endpoint's check fails the test that owns it.
func TestEndpointChecksEachRequest(t *testing.T) {
	ft := &recordingTB{TB: t}
	ep := reconcilertest.NewEndpoint(ft, func(reconcilertest.Call) reconcilertest.Response {
		return reconcilertest.JSON(map[string]any{"result": "ok"})
	}, reconcilertest.EndpointOptions{Check: func([]byte) error { return errors.New("not the schema") }})
	post(t, ep.URL(), "team", "a", "create")
	if !ft.failed() {
		t.Fatal("a request failing the check did not fail the test")
	}
}

// recordingTB records Errorf instead of failing the real test.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors int
}

func (r *recordingTB) Errorf(string, ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors++
}

func (r *recordingTB) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errors > 0
}
