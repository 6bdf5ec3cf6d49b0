package keyledger

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/remote"
)

func TestLedgerKeepsTheStrongestTrigger(t *testing.T) {
	l := New()
	now := time.Now()
	l.Note("ns/a", TriggerResync)
	l.Note("ns/a", TriggerUpdate)
	l.Note("ns/a", TriggerChild)
	if got, _, _ := l.Begin("ns/a", now); got != TriggerUpdate {
		t.Errorf("begin = %s, want update (stronger than child and resync)", got)
	}
	l.End("ns/a", now, false)
	if _, _, ok := l.Begin("ns/a", now); ok {
		t.Error("begin with nothing pending started a pass: a delayed add already covered must cost nothing")
	}
	l.End("ns/a", now, false)
	last := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "a"}}}
	l.NoteDelete("ns/a", last)
	l.Note("ns/a", TriggerResync)
	got, tomb, _ := l.Begin("ns/a", now)
	if got != TriggerDelete || tomb != last {
		t.Errorf("begin after delete+resync = %s, %v, want delete with its tombstone", got, tomb)
	}
	// A newer delete arrives during the pass: finishing the old one must not drop it.
	newer := last.DeepCopy()
	l.NoteDelete("ns/a", newer)
	l.DropTombstone("ns/a", tomb)
	l.End("ns/a", now, true)
	if _, tomb, _ := l.Begin("ns/a", now); tomb != newer {
		t.Errorf("tombstone after the old delete finished = %v, want the newer one kept", tomb)
	}
	l.End("ns/a", now, false)
	// A new object under the same name does not retire the old one's tombstone: its delete
	// is delivered first. The old object coming back (same uid) does.
	newer.SetUID("old")
	l.NoteObject("ns/a", TriggerCreate, "new")
	if _, tomb, _ := l.Begin("ns/a", now); tomb != newer {
		t.Error("a new object under the same name dropped the old one's undelivered delete")
	}
	l.End("ns/a", now, false)
	l.NoteObject("ns/a", TriggerUpdate, "old")
	if _, tomb, _ := l.Begin("ns/a", now); tomb != nil {
		t.Error("tombstone kept after the object itself came back")
	}
}

func incarnation(uid, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "t.ork.test/v1", "kind": "App"}}
	u.SetNamespace("ns")
	u.SetName("a")
	u.SetUID(types.UID(uid))
	u.SetResourceVersion(rv)
	return u
}

// Two incarnations of one name deleted before ork's pass: each gets its delete, oldest
// first; the second never overwrites the first.
func TestEachDeletedIncarnationKeepsItsPendingDelete(t *testing.T) {
	l := New()
	now := time.Now()
	first, second := incarnation("u1", "1"), incarnation("u2", "3")
	l.NoteDelete("ns/a", first)
	l.NoteObject("ns/a", TriggerCreate, "u2")
	l.NoteDelete("ns/a", second)
	got, tomb, _ := l.Begin("ns/a", now)
	if got != TriggerDelete || tomb == nil || tomb.GetUID() != "u1" {
		t.Fatalf("first pass: %s of %v, want the delete of u1", got, tomb)
	}
	if more := l.DropTombstone("ns/a", tomb); !more {
		t.Error("dropTombstone says no delete is left, want u2's")
	}
	l.End("ns/a", now, true)
	l.Note("ns/a", TriggerDelete) // what handle queues when a delete is left
	if _, tomb, _ := l.Begin("ns/a", now); tomb == nil || tomb.GetUID() != "u2" {
		t.Fatalf("second pass: tombstone %v, want the delete of u2", tomb)
	}
}

// Forgetting objects drops their memos, and with them a record left with nothing owed; a
// record that still owes a trigger or a resync stays, and so do other objects' memos.
func TestForgetObjectsDropsARecordWithNothingOwed(t *testing.T) {
	l := New()
	x := []remote.AppliedResource{{Kind: "ConfigMap", Name: "x", Outcome: "created"}}
	for _, key := range []string{"ns/w", "ns/pending", "ns/resync"} {
		l.SetLastApply(key, "gone", x)
		l.MarkFinalized(key, "gone")
		l.MarkRemoved(key, "gone")
		l.WroteStatus(key, "gone", "9")
	}
	l.SetLastApply("ns/o", "kept", x)
	l.Note("ns/pending", TriggerUpdate)
	l.ResyncAfter("ns/resync", time.Now(), time.Minute)
	l.ForgetObjects(func(uid types.UID) bool { return uid == "gone" })

	l.mu.Lock()
	_, kept := l.keys["ns/w"]
	_, pending := l.keys["ns/pending"]
	_, resync := l.keys["ns/resync"]
	l.mu.Unlock()
	if kept {
		t.Error("the record of a forgotten object, with nothing owed, is kept")
	}
	if !pending || !resync {
		t.Errorf("a record that owes a trigger (%v) or a resync (%v) went", pending, resync)
	}
	for _, key := range []string{"ns/pending", "ns/resync"} {
		if l.LastApply(key, "gone") != nil || l.Finalized(key, "gone") || l.Removed(key, "gone") {
			t.Errorf("%s: a forgotten object's memo is kept", key)
		}
		if uid, rv := l.StatusWrite(key); uid != "" || rv != "" {
			t.Errorf("%s: a forgotten object's status write is kept (%s, %s)", key, uid, rv)
		}
	}
	if len(l.LastApply("ns/o", "kept")) != 1 {
		t.Error("another object's lastApply went")
	}
}

// Only the first pass of an object in a holder's life is its first: a later pass is not,
// another incarnation's is, and a forgotten object (its bucket moved away and back) starts
// again.
func TestFirstPassIsOncePerObjectUntilForgotten(t *testing.T) {
	l := New()
	steps := []struct {
		what string
		key  string
		uid  types.UID
		want bool
	}{
		{"the first pass", "ns/a", "u1", true},
		{"a later pass", "ns/a", "u1", false},
		{"another CR", "ns/b", "u2", true},
		{"a new incarnation of the name", "ns/a", "u3", true},
	}
	for _, s := range steps {
		if got := l.FirstPass(s.key, s.uid); got != s.want {
			t.Errorf("%s: FirstPass = %v, want %v", s.what, got, s.want)
		}
	}
	l.ForgetObjects(func(uid types.UID) bool { return uid == "u3" })
	if !l.FirstPass("ns/a", "u3") {
		t.Error("after its forget, an object's next pass is not its first")
	}
	if l.FirstPass("ns/b", "u2") {
		t.Error("the forget of another object made this one's next pass a first")
	}
}
