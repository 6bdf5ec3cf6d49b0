// Package spokes keeps one controller's targets (docs/multicluster.md): which custom
// resource's last pass went to which target, and per target in use a spoke, the target's
// child caches and the writer built on them; and it probes the engine's targets.
package spokes

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/target"
)

// SyncTimeout bounds the wait of a pass for a new spoke's child caches: longer and a dead
// target would hold the worker.
const SyncTimeout = 5 * time.Second

// Uses counts the controllers holding a spoke of each target: a target none holds is
// forgotten by the pool (its client dropped, its breaker reset). One Uses serves the engine.
type Uses struct {
	mu   sync.Mutex
	refs map[target.Ref]int
}

func (u *Uses) add(ref target.Ref) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.refs == nil {
		u.refs = map[target.Ref]int{}
	}
	u.refs[ref]++
}

// Holds reports whether a controller holds a spoke of ref.
func (u *Uses) Holds(ref target.Ref) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.refs[ref] > 0
}

// done releases one hold; true when it was the last.
func (u *Uses) done(ref target.Ref) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.refs[ref]--
	if u.refs[ref] > 0 {
		return false
	}
	delete(u.refs, ref)
	return true
}

// Set is one controller's targets: the compiled template, a spoke per target in use, and
// which CR uses which target.
type Set struct {
	// Template is the CRD's compiled target.
	Template *target.Template
	uses     *Uses

	mu     sync.Mutex
	byRef  map[target.Ref]*Spoke
	held   map[target.Ref]struct{}
	keys   map[string]keyTarget
	owners map[types.UID]string
}

// keyTarget is the target a CR's last pass resolved, and the CR's uid.
type keyTarget struct {
	ref target.Ref
	uid types.UID
}

// New is the Set of a controller whose CRD's target is tmpl; uses is the engine's count
// of holds (nil: nothing counts them).
func New(tmpl *target.Template, uses *Uses) *Set {
	return &Set{Template: tmpl, uses: uses, byRef: map[target.Ref]*Spoke{}, held: map[target.Ref]struct{}{}, keys: map[string]keyTarget{}, owners: map[types.UID]string{}}
}

// Spoke is one target as one controller uses it.
type Spoke struct {
	Client  *target.Client
	Writer  *childwrite.Writer
	Book    *childwrite.Book
	Factory Factory
	// Caches are the child caches by the type key the controller names its children with.
	Caches map[string]cache.Indexer
	Synced []cache.InformerSynced
	stop   chan struct{}
	once   sync.Once
}

// Factory is a target's child informer factory: metadata only, or whole objects when the
// reconciler sees the children (payload.children), as on the hub.
type Factory interface {
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	Start(stop <-chan struct{})
	Shutdown()
}

// NewSpoke is an empty spoke of cl whose caches factory builds; the caller adds the caches
// and the writer, then starts it.
func NewSpoke(cl *target.Client, factory Factory) *Spoke {
	return &Spoke{Client: cl, Book: childwrite.NewBook(), Factory: factory, Caches: map[string]cache.Indexer{}, stop: make(chan struct{})}
}

// Start starts the spoke's informers.
func (sp *Spoke) Start() { sp.Factory.Start(sp.stop) }

// close stops the spoke's informers and waits for them.
func (sp *Spoke) close() {
	sp.once.Do(func() {
		close(sp.stop)
		sp.Factory.Shutdown()
	})
}

// Children are the objects of the spoke's caches whose index names uid, by type key and
// name, as the hub's children are given to a reconciler.
func (sp *Spoke) Children(index string, uid types.UID) map[string]map[string]map[string]any {
	out := map[string]map[string]map[string]any{}
	for typeKey, idx := range sp.Caches {
		objs, err := idx.ByIndex(index, string(uid))
		if err != nil {
			continue
		}
		for _, o := range objs {
			u, ok := o.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if out[typeKey] == nil {
				out[typeKey] = map[string]map[string]any{}
			}
			out[typeKey][u.GetName()] = u.Object
		}
	}
	return out
}

// Use records that key's CR (uid) goes to ref; the target it used before, if another, may
// be released (returned).
func (s *Set) Use(key string, uid types.UID, ref target.Ref) (released []target.Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, had := s.keys[key]
	if had && prev.uid != uid {
		delete(s.owners, prev.uid)
	}
	s.keys[key] = keyTarget{ref: ref, uid: uid}
	s.owners[uid] = key
	if had && prev.ref != ref && !s.usedLocked(prev.ref) {
		released = append(released, prev.ref)
	}
	return released
}

// Forget drops what s knows of the CRs for which gone is true; the targets none of its CRs
// use any more are returned.
func (s *Set) Forget(gone func(key string, uid types.UID) bool) (released []target.Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	refs := map[target.Ref]bool{}
	for key, kt := range s.keys {
		if gone(key, kt.uid) {
			delete(s.keys, key)
			delete(s.owners, kt.uid)
			refs[kt.ref] = true
		}
	}
	for ref := range refs {
		if !ref.Local() && !s.usedLocked(ref) {
			released = append(released, ref)
		}
	}
	return released
}

func (s *Set) usedLocked(ref target.Ref) bool {
	for _, kt := range s.keys {
		if kt.ref == ref {
			return true
		}
	}
	return false
}

// KeysOf lists the CRs whose last pass went to ref.
func (s *Set) KeysOf(ref target.Ref) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for key, kt := range s.keys {
		if kt.ref == ref {
			out = append(out, key)
		}
	}
	return out
}

// TargetOf is the target key's CR went to at its last pass; false before its first.
func (s *Set) TargetOf(key string) (target.Ref, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kt, ok := s.keys[key]
	return kt.ref, ok
}

// OwnerKey is the key of the CR of uid, as its last pass recorded it.
func (s *Set) OwnerKey(uid types.UID) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, ok := s.owners[uid]
	return key, ok
}

// Current is the spoke of the target key's CR (uid) went to at its last pass; false when
// that was the hub, another CR of the key, or the spoke is gone.
func (s *Set) Current(key string, uid types.UID) (*Spoke, bool) {
	s.mu.Lock()
	kt, ok := s.keys[key]
	sp := s.byRef[kt.ref]
	s.mu.Unlock()
	if !ok || kt.uid != uid || kt.ref.Local() || sp == nil {
		return nil, false
	}
	return sp, true
}

// Running is the spoke of ref, when one runs.
func (s *Set) Running(ref target.Ref) (*Spoke, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, ok := s.byRef[ref]
	return sp, ok
}

// For is the spoke of ref, built by build (or rebuilt, when the pool's client is no longer
// cl: a rotated Secret), its child caches synced. build runs under s's lock.
func (s *Set) For(ctx context.Context, ref target.Ref, cl *target.Client, build func() (*Spoke, error)) (*Spoke, error) {
	s.mu.Lock()
	sp := s.byRef[ref]
	if sp != nil && sp.Client != cl {
		delete(s.byRef, ref)
		defer sp.close() // the old client's informers: after the lock
		sp = nil
	}
	if sp == nil {
		var err error
		if sp, err = build(); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		if _, held := s.held[ref]; !held {
			// One hold per controller, kept across rebuilds (a rotation), released with
			// the target's last CR (Release).
			s.held[ref] = struct{}{}
			if s.uses != nil {
				s.uses.add(ref)
			}
		}
		s.byRef[ref] = sp
		go s.watchRotation(ref, sp)
	}
	s.mu.Unlock()
	syncCtx, cancel := context.WithTimeout(ctx, SyncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), sp.Synced...) {
		return nil, &target.Error{Ref: ref, Err: fmt.Errorf("its child caches did not sync within %s", SyncTimeout)}
	}
	return sp, nil
}

// watchRotation drops sp when the pool drops its client (the Secret changed, the target
// was forgotten, the pool closed): the next pass builds the spoke anew with the new client.
func (s *Set) watchRotation(ref target.Ref, sp *Spoke) {
	select {
	case <-sp.Client.Done():
	case <-sp.stop:
		return
	}
	s.mu.Lock()
	if s.byRef[ref] == sp {
		delete(s.byRef, ref)
	}
	s.mu.Unlock()
	sp.close()
}

// Release stops the spokes of refs, which none of the controller's CRs use any more; the
// targets no controller holds any more are returned, for the pool to forget.
func (s *Set) Release(refs []target.Ref) (unheld []target.Ref) {
	for _, ref := range refs {
		if ref.Local() {
			continue
		}
		s.mu.Lock()
		sp := s.byRef[ref]
		delete(s.byRef, ref)
		_, held := s.held[ref]
		delete(s.held, ref)
		s.mu.Unlock()
		if sp != nil {
			sp.close()
		}
		if held && s.uses != nil && s.uses.done(ref) {
			unheld = append(unheld, ref)
		}
	}
	return unheld
}

// CloseAll stops every spoke's informers (the engine stops).
func (s *Set) CloseAll() {
	s.mu.Lock()
	all := make([]*Spoke, 0, len(s.byRef))
	for ref, sp := range s.byRef {
		all = append(all, sp)
		delete(s.byRef, ref)
	}
	s.mu.Unlock()
	for _, sp := range all {
		sp.close()
	}
}
