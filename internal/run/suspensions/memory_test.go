package suspensions

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// The memory keeps, per key, the uid suspended at its last pass: the next pass of that
// uid without the annotation is its resume, another uid's is not; a gone or released CR is
// forgotten, and a pass whose context ended (its bucket released) records nothing.
func TestSuspendMemoryKeepsTheLastPassPerUID(t *testing.T) {
	live := t.Context()
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	type step struct {
		ctx     context.Context
		key     string
		uid     types.UID
		on      bool
		wantWas bool
		wantN   int
	}
	for _, tc := range []struct {
		name   string
		steps  []step
		forget types.UID // forgotten after the steps, when set
		wantN  int       // after forget
	}{
		{name: "suspended then resumed", steps: []step{
			{ctx: live, key: "a", uid: "u1", on: true, wantN: 1},
			{ctx: live, key: "a", uid: "u1", on: true, wantWas: true, wantN: 1},
			{ctx: live, key: "a", uid: "u1", on: false, wantWas: true, wantN: 0},
			{ctx: live, key: "a", uid: "u1", on: false, wantN: 0},
		}},
		{name: "another incarnation of the name is not resumed", steps: []step{
			{ctx: live, key: "a", uid: "u1", on: true, wantN: 1},
			{ctx: live, key: "a", uid: "u2", on: false, wantN: 0},
		}},
		{name: "a pass whose context ended records nothing", steps: []step{
			{ctx: ended, key: "a", uid: "u1", on: true, wantN: 0},
			{ctx: live, key: "a", uid: "u1", on: true, wantN: 1},
			{ctx: ended, key: "a", uid: "u1", on: false, wantWas: true, wantN: 1},
		}},
		{name: "a released bucket's CRs are forgotten", steps: []step{
			{ctx: live, key: "a", uid: "u1", on: true, wantN: 1},
			{ctx: live, key: "b", uid: "u2", on: true, wantN: 2},
		}, forget: "u1", wantN: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil)
			for i, st := range tc.steps {
				if was, n := s.Set(st.ctx, st.key, st.uid, st.on); was != st.wantWas || n != st.wantN {
					t.Fatalf("step %d: Set(%s, %s, %v) = %v, %d; want %v, %d", i, st.key, st.uid, st.on, was, n, st.wantWas, st.wantN)
				}
			}
			if tc.forget == "" {
				return
			}
			s.WarnOnce("a", tc.forget, "paused")
			if n := s.Forget(func(uid types.UID) bool { return uid == tc.forget }); n != tc.wantN {
				t.Fatalf("forget left %d suspended, want %d", n, tc.wantN)
			}
			if _, ok := s.warned["a"]; ok {
				t.Fatal("forget kept the warning of a forgotten uid")
			}
		})
	}
}

// A resume mark is per uid, kept from the first resume until the CR is suspended again,
// dropped with the CR or its bucket, and not taken by a pass whose context ended.
func TestResumeMarkKeepsTheFirstResumePerUID(t *testing.T) {
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t2 := t1.Add(time.Minute)
	s := New(nil)
	s.MarkResumed(ended, "a", "u1", t1)
	if got := s.ResumedAt("a", "u1"); !got.IsZero() {
		t.Fatalf("a pass whose context ended marked a resume at %v", got)
	}
	s.MarkResumed(t.Context(), "a", "u1", t1)
	s.MarkResumed(t.Context(), "a", "u1", t2)
	if got := s.ResumedAt("a", "u1"); !got.Equal(t1) {
		t.Fatalf("ResumedAt = %v, want the first resume %v", got, t1)
	}
	if got := s.ResumedAt("a", "u2"); !got.IsZero() {
		t.Fatalf("another incarnation is resumed at %v", got)
	}
	s.MarkResumed(t.Context(), "b", "u3", t2)
	s.Forget(func(uid types.UID) bool { return uid == "u3" })
	if got := s.ResumedAt("b", "u3"); !got.IsZero() {
		t.Fatalf("a released bucket's resume is kept: %v", got)
	}
	s.Set(t.Context(), "a", "u1", true)
	if got := s.ResumedAt("a", "u1"); !got.IsZero() {
		t.Fatalf("suspended again, the earlier resume is kept: %v", got)
	}
	s.MarkResumed(t.Context(), "a", "u1", t2)
	if got := s.ResumedAt("a", "u1"); !got.Equal(t2) {
		t.Fatalf("resumed again: ResumedAt = %v, want the new resume %v", got, t2)
	}
	s.ForgetResumed("a")
	if got := s.ResumedAt("a", "u1"); !got.IsZero() {
		t.Fatalf("a gone CR's resume is kept: %v", got)
	}
}

// The count of suspended CRs is reported under the lock that changes it: passes of many CRs
// at once leave the true count last, never an older one (ork_suspended_crs stuck below the
// number suspended, with no pass to come for a suspended CR to correct it).
func TestSuspendedCountIsReportedInOrder(t *testing.T) {
	var last atomic.Int64
	s := New(func(n int) { last.Store(int64(n)) })
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { s.Set(t.Context(), fmt.Sprint("ns/cr-", i), types.UID(fmt.Sprint("u", i)), true) })
	}
	wg.Wait()
	if got := last.Load(); got != n {
		t.Fatalf("last count reported %d, want %d", got, n)
	}
}
