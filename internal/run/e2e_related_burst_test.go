package run_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// A burst of edits (100) to one ConfigMap that 50 CRs read gives each CR a bounded number of
// passes (the child minimum interval applies: at most one per interval of edits, plus one),
// and they converge on the last version; then nothing more comes while nothing changes.
func TestRelatedBurstIsBounded(t *testing.T) {
	t.Parallel()
	const crs, edits = 50, 100
	interval := 500 * time.Millisecond
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: `              related:
                - {as: shared, kind: ConfigMap, name: shared}
`})
	cms := env.Clientset.CoreV1().ConfigMaps(f.NS)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Start(set, nil, func(o *run.Options) { o.ChildMinInterval = interval })
	for i := range crs {
		f.CreateCR(fmt.Sprintf("cr-%d", i), map[string]any{})
	}
	for i := range crs {
		f.WaitReady(fmt.Sprintf("cr-%d", i), "True")
	}
	before := len(ep.Recorded())
	start := time.Now()
	for i := 1; i <= edits; i++ {
		if _, err := cms.Patch(t.Context(), "shared", types.MergePatchType, fmt.Appendf(nil, `{"data":{"n":"%d"}}`, i), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	// Every CR converges on the last edit.
	last := map[string]bool{}
	for len(last) < crs {
		c := ep.NextMatching(t, "a pass with the last edit", func(c call) bool {
			rel, _ := relatedOf(t, c)
			return len(rel["shared"]) == 1 && rel["shared"][0]["data"].(map[string]any)["n"] == fmt.Sprint(edits)
		})
		last[c.CRName()] = true
	}
	// Then quiet: nothing changes, nothing is called. Bound: two intervals, past any pass
	// the burst could still have delayed.
	quiet := time.After(2 * interval)
	for done := false; !done; {
		select {
		case <-ep.Arrived():
		case <-quiet:
			done = true
		}
	}
	perCR := map[string]int{}
	seen := map[string][]string{}
	for _, c := range ep.Recorded()[before:] {
		perCR[c.CRName()]++
		rel, _ := relatedOf(t, c)
		n := "?"
		if len(rel["shared"]) == 1 {
			n = fmt.Sprint(rel["shared"][0]["data"].(map[string]any)["n"])
		}
		seen[c.CRName()] = append(seen[c.CRName()], fmt.Sprintf("%s n=%s at +%s", c.Trigger, n, c.Start.Sub(start).Round(time.Millisecond)))
	}
	// One pass per interval the edits lasted, plus one at their start and one after them.
	bound := int(took/interval) + 2
	for name, n := range perCR {
		if n > bound {
			t.Errorf("%s had %d passes for %d edits over %s, want at most %d (one per %s, plus one): %v", name, n, edits, took, bound, interval, seen[name])
		}
	}
	if len(perCR) != crs {
		t.Errorf("passes for %d CRs, want all %d", len(perCR), crs)
	}
	t.Logf("%d edits over %s: passes per CR %v (bound %d)", edits, took, perCR, bound)
}
