// Package trace keeps the last decisions ork took for each object (trigger, request digest,
// result, apply outcomes, durations; never a secret), serves them as JSON over HTTP, and
// fetches them from there.
package trace

import (
	"container/list"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults of Options.
const (
	DefaultDepth      = 20
	DefaultMaxObjects = 10000
	// maxText bounds a message or an apply error, as the Ready condition does.
	maxText = 1024
)

// Key names an object: its CRD's name in the Katalog, namespace ("" when cluster-scoped)
// and name.
type Key struct {
	CRD       string `json:"crd"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String reads "webapp default/my-webapp".
func (k Key) String() string {
	if k.Namespace == "" {
		return k.CRD + " " + k.Name
	}
	return k.CRD + " " + k.Namespace + "/" + k.Name
}

// Decision is one reconcile of one object. The engine fills it from what it already has;
// none of it may hold a secret (CallError messages are scrubbed of the token).
type Decision struct {
	// Time is when the reconcile started; Store.Record sets it when zero.
	Time time.Time `json:"time"`
	// Trigger is why it ran: create, update, delete, resync, requeue, child.
	Trigger string `json:"trigger"`
	// Attempt counts the tries of this key, 1 for the first.
	Attempt int `json:"attempt,omitempty"`
	// Request is the digest of the PreparedRequest sent (exchange.Digest, so that it names
	// the recording of the same call); empty when none was sent.
	Request string `json:"request,omitempty"`
	// Result is the reconciler's answer: "ok", "requeue" or "error"; empty when no answer
	// was decoded.
	Result string `json:"result,omitempty"`
	// Success, Reason and Message are the Ready condition's.
	Success bool   `json:"success"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	// Next is what the engine did with the key: "done", "requeue after 30s", "backoff",
	// "retry after 2s".
	Next string `json:"next,omitempty"`
	// Target is the cluster of the object's children when it is not the one ork runs in:
	// namespace/name[key] of its kubeconfig Secret, as conditions and logs name it.
	Target string `json:"target,omitempty"`
	// Related are the objects payload.related read for the pass, "as: resource
	// namespace/name@resourceVersion", and what found nothing, "as: resource ref (none)".
	Related []string `json:"related,omitempty"`
	// Applies are the objects of the answer, in order, with what applying each did.
	Applies []Apply `json:"applies,omitempty"`
	// Side is the reconciler that answered when it was not the stable one: "candidate" for
	// a canary pass the candidate reconciled, "shadow" for the comparison of a candidate's
	// dry-run answer with the stable pass's (applied nothing; its own entry, as it ends
	// later than the pass).
	Side string `json:"side,omitempty"`
	// Divergences are a shadow comparison's differing field paths, never values.
	Divergences []string `json:"divergences,omitempty"`
	// Durations of the parts of the reconcile.
	Durations Durations `json:"durations"`
}

// Apply outcomes.
const (
	Created   = "created"
	Updated   = "updated"
	Unchanged = "unchanged"
	Failed    = "failed"
	// Skipped: not applied, because an earlier entry failed or the result was refused.
	Skipped = "skipped"
	// Pruned: a child the answer no longer listed, deleted (reconcile.remote.prune).
	Pruned = "pruned"
)

// Apply is what applying one object did.
type Apply struct {
	// Ref is "deployments/web"; Namespace is the object's.
	Ref       string `json:"ref"`
	Namespace string `json:"namespace,omitempty"`
	Outcome   string `json:"outcome"`
	Error     string `json:"error,omitempty"`
}

// Durations of a reconcile's parts; zero parts did not run.
type Durations struct {
	Remote Duration `json:"remote,omitzero"`
	Apply  Duration `json:"apply,omitzero"`
	Status Duration `json:"status,omitzero"`
	Total  Duration `json:"total"`
}

// Duration is a time.Duration written as a Go duration string in JSON ("12.5ms").
type Duration time.Duration

// MarshalJSON writes "12.5ms".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// String is time.Duration's.
func (d Duration) String() string { return time.Duration(d).String() }

// Options tune a Store.
type Options struct {
	// Depth is how many decisions are kept per object; default DefaultDepth (20).
	Depth int
	// MaxObjects bounds the objects kept; the one decided on least recently goes first.
	// Default DefaultMaxObjects.
	MaxObjects int
	// Now stamps decisions without a Time; default time.Now.
	Now func() time.Time
}

// Store keeps the last Depth decisions of each object. It is safe for concurrent use.
type Store struct {
	depth, maxObjects int
	now               func() time.Time

	mu   sync.Mutex
	objs map[Key]*ring
	// recent orders the keys, most recently decided first, for eviction.
	recent *list.List
}

// ring holds an object's last decisions; next is where the following one goes.
type ring struct {
	buf  []Decision
	next int
	elem *list.Element
}

// NewStore returns an empty Store.
func NewStore(opts Options) *Store {
	s := &Store{depth: opts.Depth, maxObjects: opts.MaxObjects, now: opts.Now, objs: map[Key]*ring{}, recent: list.New()}
	if s.depth <= 0 {
		s.depth = DefaultDepth
	}
	if s.maxObjects <= 0 {
		s.maxObjects = DefaultMaxObjects
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Record adds d to k's decisions, dropping the oldest beyond Depth. Messages are cut to
// 1024 characters.
func (s *Store) Record(k Key, d Decision) {
	if d.Time.IsZero() {
		d.Time = s.now()
	}
	d.Message = cut(d.Message)
	d.Applies = slices.Clone(d.Applies)
	d.Divergences = slices.Clone(d.Divergences)
	for i := range d.Applies {
		d.Applies[i].Error = cut(d.Applies[i].Error)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.objs[k]
	if !ok {
		r = &ring{buf: make([]Decision, 0, s.depth), elem: s.recent.PushFront(k)}
		s.objs[k] = r
		for len(s.objs) > s.maxObjects {
			oldest := s.recent.Back()
			s.recent.Remove(oldest)
			delete(s.objs, oldest.Value.(Key))
		}
	} else {
		s.recent.MoveToFront(r.elem)
	}
	if len(r.buf) < s.depth {
		r.buf = append(r.buf, d)
		return
	}
	r.buf[r.next] = d
	r.next = (r.next + 1) % s.depth
}

// Forget drops k's decisions (the object is gone for good).
func (s *Store) Forget(k Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.objs[k]; ok {
		s.recent.Remove(r.elem)
		delete(s.objs, k)
	}
}

// Decisions returns a copy of k's decisions, oldest first; nil when there are none.
func (s *Store) Decisions(k Key) []Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.objs[k]
	if !ok {
		return nil
	}
	return slices.Concat(r.buf[r.next:], r.buf[:r.next])
}

// Summary is one object in the listing.
type Summary struct {
	Key
	Decisions int       `json:"decisions"`
	Last      time.Time `json:"last"`
	// Reason is the last decision's.
	Reason string `json:"reason"`
}

// Objects lists the objects with decisions, sorted by CRD, namespace and name.
func (s *Store) Objects() []Summary {
	s.mu.Lock()
	out := make([]Summary, 0, len(s.objs))
	for k, r := range s.objs {
		last := r.buf[(r.next+len(r.buf)-1)%len(r.buf)]
		out = append(out, Summary{Key: k, Decisions: len(r.buf), Last: last.Time, Reason: last.Reason})
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Summary) int {
		return strings.Compare(a.CRD+"\x00"+a.Namespace+"\x00"+a.Name, b.CRD+"\x00"+b.Namespace+"\x00"+b.Name)
	})
	return out
}

func cut(s string) string {
	if utf8.RuneCountInString(s) <= maxText {
		return s
	}
	return string([]rune(s)[:maxText]) + "…"
}
