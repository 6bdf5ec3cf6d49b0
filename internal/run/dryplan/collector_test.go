package dryplan

import (
	"testing"

	"github.com/orkspace/ork/internal/runplan"
)

// A one-shot run ends once every CRD's keys are known and each has passed once; a key of
// one CRD does not count for another.
func TestOneShotEndsOnceEveryExpectedKeyPassed(t *testing.T) {
	r := New(Options{CRDs: 2})
	done := func() bool {
		select {
		case <-r.AllDone():
			return true
		default:
			return false
		}
	}
	r.Expect("a", []string{"ns/x"})
	r.Passed("a", "ns/x")
	if done() {
		t.Fatal("ended before the second CRD's keys were known")
	}
	r.Expect("b", []string{"ns/x", "ns/y"})
	r.Passed("b", "ns/x")
	if done() {
		t.Fatal("ended with ns/y of b still to pass")
	}
	r.Passed("b", "ns/y")
	if !done() {
		t.Error("every key passed, and the run goes on")
	}
}

// With Watch, or without a dry run (nil), the run has no end of its own.
func TestAWatchingOrAbsentPlanNeverEnds(t *testing.T) {
	var none *Collector
	none.Expect("a", nil)
	none.Passed("a", "ns/x")
	if none.OneShot() || none.AllDone() != nil {
		t.Error("no dry run, and a one-shot end")
	}
	if w := New(Options{Watch: true}); w.OneShot() || w.AllDone() != nil {
		t.Error("--watch, and a one-shot end")
	}
}

// A pass's plan carries the changes it noted, and only its own; the next pass of the same
// key starts empty, and a pass that noted nothing says so with an empty list.
func TestEmitHandsOverThePassesOwnChanges(t *testing.T) {
	var plans []runplan.CR
	r := New(Options{OnPlan: func(p runplan.CR) { plans = append(plans, p) }})
	r.Note("a", "ns/x", runplan.Change{Ref: "one"})
	r.Note("b", "ns/x", runplan.Change{Ref: "other CRD"})
	r.Note("a", "ns/x", runplan.Change{Ref: "two"})
	r.Emit("a", "ns/x", runplan.CR{Name: "x"})
	r.Emit("a", "ns/x", runplan.CR{Name: "x"})
	if len(plans) != 2 || plans[0].Name != "x" || len(plans[0].Changes) != 2 || plans[0].Changes[1].Ref != "two" {
		t.Fatalf("plans %+v, want x with its two changes", plans)
	}
	if plans[1].Changes == nil || len(plans[1].Changes) != 0 {
		t.Errorf("second pass's changes %#v, want an empty list", plans[1].Changes)
	}
}
