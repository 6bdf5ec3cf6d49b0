package run

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/run/kobj"
)

func TestSuspendedPatch(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ready := map[string]any{"type": "Ready", "status": "True", "reason": "ReconcileSucceeded"}
	suspended := map[string]any{"type": "Suspended", "status": "True", "reason": "Suspended", "message": suspendMessage,
		"lastTransitionTime": "2026-01-02T03:04:05Z"}
	resumed := map[string]any{"type": "Suspended", "status": "False", "reason": "Resumed", "message": resumedMessage,
		"lastTransitionTime": "2026-01-02T03:04:05Z"}
	deleting := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		ts := metav1.NewTime(now.Add(-time.Hour))
		u.SetDeletionTimestamp(&ts)
		return u
	}
	cr := func(conds ...any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a", "uid": "u1", "resourceVersion": "7"}}}
		if conds != nil {
			u.Object["status"] = map[string]any{"conditions": conds, "phase": "Running"}
		}
		return u
	}
	for _, tc := range []struct {
		name string
		base *unstructured.Unstructured
		on   bool
		want []any // nil: no patch
	}{
		{name: "suspend adds the condition, Ready stays", base: cr(ready), on: true, want: []any{ready, suspended}},
		{name: "suspend with no status", base: cr(), on: true, want: []any{suspended}},
		{name: "already suspended: no write", base: cr(ready, suspended), on: true},
		{name: "resume removes it, Ready stays", base: cr(suspended, ready), on: false, want: []any{ready}},
		{name: "a delete's resume sets it False, Resumed, at the resume", base: deleting(cr(suspended, ready)), on: false, want: []any{resumed, ready}},
		{name: "a delete resumed already: no write", base: deleting(cr(resumed, ready)), on: false},
		{name: "never suspended: no write", base: cr(ready), on: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := suspendedPatch(tc.base, tc.on, now)
			if tc.want == nil {
				if p != nil {
					t.Fatalf("patch = %v, want none", p)
				}
				return
			}
			if p == nil {
				t.Fatal("no patch")
			}
			status := p["status"].(map[string]any)
			if len(status) != 1 || !kobj.EqualJSON(status["conditions"], tc.want) {
				t.Fatalf("status patch = %v, want conditions %v only", status, tc.want)
			}
			md := p["metadata"].(map[string]any)
			if md["uid"] != "u1" || md["resourceVersion"] != "7" {
				t.Fatalf("patch preconditions = %v", md)
			}
		})
	}
}

// suspensions remember, per key, the uid suspended at its last pass: the next pass of that
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
			s := newSuspensions(nil)
			for i, st := range tc.steps {
				if was, n := s.set(st.ctx, st.key, st.uid, st.on); was != st.wantWas || n != st.wantN {
					t.Fatalf("step %d: set(%s, %s, %v) = %v, %d; want %v, %d", i, st.key, st.uid, st.on, was, n, st.wantWas, st.wantN)
				}
			}
			if tc.forget == "" {
				return
			}
			s.warnOnce("a", tc.forget, "paused")
			if n := s.forget(func(uid types.UID) bool { return uid == tc.forget }); n != tc.wantN {
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
	s := newSuspensions(nil)
	s.markResumed(ended, "a", "u1", t1)
	if got := s.resumedAt("a", "u1"); !got.IsZero() {
		t.Fatalf("a pass whose context ended marked a resume at %v", got)
	}
	s.markResumed(t.Context(), "a", "u1", t1)
	s.markResumed(t.Context(), "a", "u1", t2)
	if got := s.resumedAt("a", "u1"); !got.Equal(t1) {
		t.Fatalf("resumedAt = %v, want the first resume %v", got, t1)
	}
	if got := s.resumedAt("a", "u2"); !got.IsZero() {
		t.Fatalf("another incarnation is resumed at %v", got)
	}
	s.markResumed(t.Context(), "b", "u3", t2)
	s.forget(func(uid types.UID) bool { return uid == "u3" })
	if got := s.resumedAt("b", "u3"); !got.IsZero() {
		t.Fatalf("a released bucket's resume is kept: %v", got)
	}
	s.set(t.Context(), "a", "u1", true)
	if got := s.resumedAt("a", "u1"); !got.IsZero() {
		t.Fatalf("suspended again, the earlier resume is kept: %v", got)
	}
	s.markResumed(t.Context(), "a", "u1", t2)
	if got := s.resumedAt("a", "u1"); !got.Equal(t2) {
		t.Fatalf("resumed again: resumedAt = %v, want the new resume %v", got, t2)
	}
	s.forgetResumed("a")
	if got := s.resumedAt("a", "u1"); !got.IsZero() {
		t.Fatalf("a gone CR's resume is kept: %v", got)
	}
}

// The count of suspended CRs is reported under the lock that changes it: passes of many CRs
// at once leave the true count last, never an older one (ork_suspended_crs stuck below the
// number suspended, with no pass to come for a suspended CR to correct it).
func TestSuspendedCountIsReportedInOrder(t *testing.T) {
	var last atomic.Int64
	s := newSuspensions(func(n int) { last.Store(int64(n)) })
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { s.set(t.Context(), fmt.Sprint("ns/cr-", i), types.UID(fmt.Sprint("u", i)), true) })
	}
	wg.Wait()
	if got := last.Load(); got != n {
		t.Fatalf("last count reported %d, want %d", got, n)
	}
}
