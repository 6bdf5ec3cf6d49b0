// Package lanequeue is the order in which a CRD's work queue hands out keys: two lanes, fast
// for real changes and slow for passes that change nothing most of the time, each lane fair
// between groups of keys (namespaces), and within a group between its subgroups (the clusters
// of a namespace's keys). It plugs into client-go's
// work queue (workqueue.TypedQueueConfig.Queue), which keeps de-duplication, one worker per
// key, delayed adds, rate limiting and metrics.
package lanequeue

import (
	"container/list"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Lane is one of the two lanes.
type Lane int

// The lanes. Slow is the zero value: an add with no cause given is slow.
const (
	Slow Lane = iota
	Fast
)

func (l Lane) String() string {
	if l == Fast {
		return "fast"
	}
	return "slow"
}

// DefaultSlowEvery is how many takes may pass, at most, before one is from the slow lane
// while both lanes have keys ready.
const DefaultSlowEvery = 8

// Observer is told of depths and waits. It is called with the queue's lock held: it must be
// quick and must not call back into the queue.
type Observer interface {
	// LaneDepth is the number of keys ready in lane.
	LaneDepth(lane Lane, n int)
	// NamespaceDepth is the number of keys ready for namespace, over both lanes; 0 when it
	// has none left.
	NamespaceDepth(namespace string, n int)
	// Waited is how long a key waited, from its push to its take from lane.
	Waited(lane Lane, d time.Duration)
}

// Options configure a Queue.
type Options[T comparable] struct {
	// Group is the group of a key: keys of one group share a turn, and the Observer's
	// NamespaceDepth counts by it. Default: one group.
	Group func(T) string
	// Subgroup is the subgroup of a key within its group: a group's turn goes to its
	// subgroups in turn, so that a group split over many subgroups takes no more turns than
	// another. It is called with the queue's lock held: it must be quick and must not call
	// back into the queue. Default: one subgroup per group.
	Subgroup func(T) string
	// SlowEvery: while both lanes have keys ready, at least one take in every SlowEvery is
	// from the slow lane. Default DefaultSlowEvery; 1 would make the slow lane the only one
	// taken while it has keys.
	SlowEvery int
	// Now is the clock for waits. Default time.Now.
	Now func() time.Time
	// Observer is told of depths and waits. Default none.
	Observer Observer
}

// Queue holds the keys ready for a worker. client-go's work queue calls Push, Touch, Len and
// Pop; the engine calls Fast before an Add whose cause is a real change, and Taken when it
// takes a key, to learn its lane.
type Queue[T comparable] struct {
	opts  Options[T]
	mu    sync.Mutex
	lanes [2]lane[T]
	items map[T]*item[T]
	// fast are keys whose next push or touch is fast.
	fast map[T]struct{}
	// taken is the lane each key was last taken from, until the engine asks.
	taken map[T]Lane
	// fastRun counts fast takes since the last slow one, while the slow lane had keys.
	fastRun int
	depth   map[string]int
}

var _ workqueue.Queue[string] = (*Queue[string])(nil)

// item is one ready key.
type item[T comparable] struct {
	key   T
	lane  Lane
	sub   *sub[T]
	elem  *list.Element
	since time.Time
	// ns is the key's namespace, as NamespaceDepth counted it at its push.
	ns string
}

// lane is a round robin over the groups with keys ready in it.
type lane[T comparable] struct {
	groups round[*group[T]]
	n      int
}

// group is one group's ready keys in one lane: a round robin over its subgroups.
type group[T comparable] struct {
	name string
	subs round[*sub[T]]
	at   *list.Element // in the lane's round
}

// sub is one subgroup's ready keys in one lane, oldest first.
type sub[T comparable] struct {
	name  string
	group *group[T]
	keys  *list.List    // of *item[T]
	at    *list.Element // in its group's round
}

// round is a round robin over named members; next is the one whose turn it is.
type round[M any] struct {
	byName map[string]M
	ring   *list.List // of M
	next   *list.Element
}

func newRound[M any]() round[M] {
	return round[M]{byName: map[string]M{}, ring: list.New()}
}

// join adds m at the end of the round: the member whose turn it is goes first.
func (r *round[M]) join(name string, m M) *list.Element {
	r.byName[name] = m
	if r.next == nil {
		r.next = r.ring.PushBack(m)
		return r.next
	}
	return r.ring.InsertBefore(m, r.next)
}

// pass passes the turn on from e, when it is e's.
func (r *round[M]) pass(e *list.Element) {
	if r.next == e {
		r.next = r.after(e)
	}
}

// leave removes the member name, at e, from the round.
func (r *round[M]) leave(name string, e *list.Element) {
	delete(r.byName, name)
	r.pass(e)
	r.ring.Remove(e)
	if r.ring.Len() == 0 {
		r.next = nil
	}
}

// after is the element after e in the round, wrapping.
func (r *round[M]) after(e *list.Element) *list.Element {
	if n := e.Next(); n != nil {
		return n
	}
	return r.ring.Front()
}

// New returns an empty queue.
func New[T comparable](opts Options[T]) *Queue[T] {
	if opts.Group == nil {
		opts.Group = func(T) string { return "" }
	}
	if opts.Subgroup == nil {
		opts.Subgroup = func(T) string { return "" }
	}
	if opts.SlowEvery <= 0 {
		opts.SlowEvery = DefaultSlowEvery
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	q := &Queue[T]{opts: opts, items: map[T]*item[T]{}, fast: map[T]struct{}{}, taken: map[T]Lane{}, depth: map[string]int{}}
	for i := range q.lanes {
		q.lanes[i] = lane[T]{groups: newRound[*group[T]]()}
	}
	return q
}

// Fast says that the next add of key has a fast cause: it is pushed to the fast lane, or,
// already waiting in the slow one, moves to the fast one. A key that is being worked on
// keeps the mark until the work queue pushes it again after Done.
func (q *Queue[T]) Fast(key T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.fast[key] = struct{}{}
}

// Taken is the lane key was last taken from (Slow when it was never taken), and forgets it.
func (q *Queue[T]) Taken(key T) Lane {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.taken[key]
	delete(q.taken, key)
	return l
}

// Depth is the number of keys ready in l.
func (q *Queue[T]) Depth(l Lane) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lanes[l].n
}

// Push adds a key that is not in the queue.
func (q *Queue[T]) Push(key T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.items[key]; ok {
		q.touch(key) // the work queue never does this; stay correct if it ever does
		return
	}
	l := Slow
	if _, ok := q.fast[key]; ok {
		delete(q.fast, key)
		l = Fast
	}
	it := &item[T]{key: key, since: q.opts.Now(), ns: q.opts.Group(key)}
	q.items[key] = it
	q.insert(it, l)
	q.countNamespace(it.ns, 1)
}

// Touch is an add of a key already waiting: a fast cause moves it to the fast lane, at the
// back of its group's keys there.
func (q *Queue[T]) Touch(key T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.touch(key)
}

func (q *Queue[T]) touch(key T) {
	if _, ok := q.fast[key]; !ok {
		return
	}
	delete(q.fast, key)
	it := q.items[key]
	if it == nil || it.lane == Fast {
		return
	}
	q.remove(it)
	q.insert(it, Fast)
}

// Len is the number of keys ready in both lanes.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lanes[Fast].n + q.lanes[Slow].n
}

// Pop takes the next key: from the fast lane, but from the slow one at least once in every
// SlowEvery takes while both have keys; within the lane, from the next group in turn, and
// within the group from its next subgroup in turn.
// The work queue calls it only when Len is not 0.
func (q *Queue[T]) Pop() T {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := Fast
	switch {
	case q.lanes[Fast].n == 0:
		l = Slow
	case q.lanes[Slow].n == 0:
		q.fastRun = 0
	case q.fastRun >= q.opts.SlowEvery-1:
		l = Slow
	default:
		q.fastRun++
	}
	if l == Slow {
		q.fastRun = 0
	}
	it := q.lanes[l].take()
	delete(q.items, it.key)
	q.taken[it.key] = l
	q.observeDepth(l)
	q.countNamespace(it.ns, -1)
	if o := q.opts.Observer; o != nil {
		o.Waited(l, q.opts.Now().Sub(it.since))
	}
	return it.key
}

func (q *Queue[T]) insert(it *item[T], l Lane) {
	it.lane = l
	q.lanes[l].add(it, it.ns, q.opts.Subgroup(it.key))
	q.observeDepth(l)
}

func (q *Queue[T]) remove(it *item[T]) {
	q.lanes[it.lane].drop(it)
	q.observeDepth(it.lane)
}

func (q *Queue[T]) observeDepth(l Lane) {
	if o := q.opts.Observer; o != nil {
		o.LaneDepth(l, q.lanes[l].n)
	}
}

// countNamespace keeps the per-namespace depth over both lanes.
func (q *Queue[T]) countNamespace(name string, delta int) {
	n := q.depth[name] + delta
	if n <= 0 {
		delete(q.depth, name)
		n = 0
	} else {
		q.depth[name] = n
	}
	if o := q.opts.Observer; o != nil {
		o.NamespaceDepth(name, n)
	}
}

// add puts it at the back of its subgroup of group gname; a group or subgroup that had no
// keys joins the end of its round.
func (l *lane[T]) add(it *item[T], gname, sname string) {
	g := l.groups.byName[gname]
	if g == nil {
		g = &group[T]{name: gname, subs: newRound[*sub[T]]()}
		g.at = l.groups.join(gname, g)
	}
	s := g.subs.byName[sname]
	if s == nil {
		s = &sub[T]{name: sname, group: g, keys: list.New()}
		s.at = g.subs.join(sname, s)
	}
	it.sub = s
	it.elem = s.keys.PushBack(it)
	l.n++
}

// take removes the oldest key of the subgroup whose turn it is in the group whose turn it
// is, and passes both turns on.
func (l *lane[T]) take() *item[T] {
	g := l.groups.next.Value.(*group[T])
	s := g.subs.next.Value.(*sub[T])
	it := s.keys.Front().Value.(*item[T])
	l.drop(it)
	// A member left empty has left its round, the turn passed on already.
	g.subs.pass(s.at)
	l.groups.pass(g.at)
	return it
}

// drop removes it from its subgroup, a subgroup left empty from its group's round, and a
// group left empty from the lane's.
func (l *lane[T]) drop(it *item[T]) {
	s := it.sub
	s.keys.Remove(it.elem)
	l.n--
	if s.keys.Len() > 0 {
		return
	}
	g := s.group
	g.subs.leave(s.name, s.at)
	if g.subs.ring.Len() == 0 {
		l.groups.leave(g.name, g.at)
	}
}
