package targetpass

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/orkspace/ork/internal/target"
)

// oneOffs are the targets whose one-off sweep client (sweeper) stays in the pool for a CR's
// next sweep, its children there still going; by CR. A CR forgotten before that sweep
// (handed back with its bucket, or gone) takes them with it: nothing else would drop them,
// and the pool probes every target it holds.
type oneOffs struct {
	mu   sync.Mutex
	kept map[sweeper][]target.Ref
}

// sweeper is a CR by key and uid: one replaced under its key is another.
type sweeper struct {
	key string
	uid types.UID
}

// keep notes that key's CR, of uid, left ref's client in the pool for its next sweep.
func (o *oneOffs) keep(key string, uid types.UID, ref target.Ref) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.kept == nil {
		o.kept = map[sweeper][]target.Ref{}
	}
	s := sweeper{key, uid}
	if !slices.Contains(o.kept[s], ref) {
		o.kept[s] = append(o.kept[s], ref)
	}
}

// done notes that the sweep of ref by key's CR, of uid, is over: its client was dropped or
// forgotten.
func (o *oneOffs) done(key string, uid types.UID, ref target.Ref) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := sweeper{key, uid}
	refs, ok := o.kept[s]
	if !ok {
		return
	}
	if refs = slices.DeleteFunc(refs, func(r target.Ref) bool { return r == ref }); len(refs) == 0 {
		delete(o.kept, s)
		return
	}
	o.kept[s] = refs
}

// forget drops the notes of the CRs gone says are gone, and returns the targets whose
// client none of the remaining notes keeps.
func (o *oneOffs) forget(gone func(key string, uid types.UID) bool) []target.Ref {
	o.mu.Lock()
	defer o.mu.Unlock()
	var dropped []target.Ref
	for s, refs := range o.kept {
		if gone(s.key, s.uid) {
			delete(o.kept, s)
			dropped = append(dropped, refs...)
		}
	}
	var out []target.Ref
	for _, ref := range dropped {
		if !slices.Contains(out, ref) && !o.keeps(ref) {
			out = append(out, ref)
		}
	}
	return out
}

// keeps reports whether a note keeps ref's client; o.mu is held.
func (o *oneOffs) keeps(ref target.Ref) bool {
	for _, refs := range o.kept {
		if slices.Contains(refs, ref) {
			return true
		}
	}
	return false
}
