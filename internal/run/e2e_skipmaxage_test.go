package run_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run/runtest"
)

// skipUnchanged's maxAge bounds how long a decision is trusted: a restart over converged CRs
// whose records are younger than maxAge calls none of them; the same restart once the
// records are older than maxAge calls every one, and each of those calls, whose answer
// changes nothing else, writes its record again (it is more than half of maxAge old), so
// that the next restart skips every CR again.
func TestSkipUnchangedMaxAgeExpiryCallsEveryCR(t *testing.T) {
	t.Parallel()
	const crs = 20
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, oneConfigMap)
	spec := runtest.RemoteSpec{Endpoint: ep.URL(), Managed: []string{"/configmaps"}}
	spec.Extra = "            skipUnchanged: {maxAge: 1h}\n"
	hour := f.WriteKatalog(spec)
	// The same Katalog but for maxAge, which the records' digests leave out.
	spec.Extra = "            skipUnchanged: {maxAge: 1s}\n"
	second := f.WriteKatalog(spec)
	name := func(i int) string { return fmt.Sprintf("app-%02d", i) }
	start := func(set *katalog.Set) func() func() { return func() func() { return f.runEngine(set, nil) } }

	stop := f.runEngine(hour, nil)
	f.convergeRecorded(ep, crs, name)
	stop()
	before, stop := f.restartPasses(ep, crs, start(hour))
	stop()
	if calls, n := callsSince(ep, before); n != 0 || f.skipped() != crs {
		t.Fatalf("a restart with records younger than maxAge made %d calls (%v) and skipped %d passes, want none and %d", n, calls, f.skipped(), crs)
	}

	recorded := map[string]time.Time{}
	var newest time.Time
	for i := range crs {
		d := lastDecisionOf(t, f.GetCR(name(i)))
		recorded[name(i)] = d.Time
		if d.Time.After(newest) {
			newest = d.Time
		}
	}
	// No engine runs: the records only age. A wait on the clock, not a timed assertion.
	f.Eventually("every record older than maxAge 1s", func() (bool, error) { return time.Since(newest) > time.Second, nil })
	before, stop = f.restartPasses(ep, crs, start(second))
	stop()
	if calls, _ := callsSince(ep, before); len(calls) != crs || f.skipped() != 0 {
		t.Errorf("a restart with records older than maxAge called %d CRs and skipped %d passes, want all %d and none", len(calls), f.skipped(), crs)
	}
	for i := range crs {
		d, ok, err := decision.FromStatus(f.GetCR(name(i)))
		if err != nil || !ok || !d.Time.After(recorded[name(i)]) || d.Children == "" {
			t.Errorf("%s's record after its call: %+v (found %v, %v); want one newer than %s, with its children",
				name(i), d, ok, err, recorded[name(i)].Format(time.RFC3339Nano))
		}
	}

	before, stop = f.restartPasses(ep, crs, start(hour))
	stop()
	if calls, n := callsSince(ep, before); n != 0 || f.skipped() != crs {
		t.Errorf("a restart over the records the calls refreshed made %d calls (%v) and skipped %d passes, want none and %d", n, calls, f.skipped(), crs)
	}
}
