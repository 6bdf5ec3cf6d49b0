// Package secretcache reads the keys of Secrets for the remote reconciler (auth tokens, CAs)
// with a GET reused for a TTL: a rotated token is picked up within seconds, and a busy
// operator makes one GET per Secret per TTL instead of one per call. Not a watch: the
// generated RBAC for a static name is `get` only.
package secretcache

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// readTimeout bounds one GET of a Secret; as long as the longest default call timeout,
// so that a slow apiserver fails the call as late as it would have anyway.
const readTimeout = 30 * time.Second

// Cache reads Secret keys with a GET, reused for ttl. Concurrent reads of one Secret share
// one GET.
type Cache struct {
	kube kubernetes.Interface
	ttl  time.Duration
	now  func() time.Time

	// life ends the reads in flight when the engine stops (Close); reads counts them.
	life  context.Context
	end   context.CancelFunc
	reads sync.WaitGroup

	mu        sync.Mutex
	entries   map[string]*secretEntry
	lastSweep time.Time
}

// secretEntry is one Secret's last read; ready is closed when the read is done.
type secretEntry struct {
	ready   chan struct{}
	secret  *corev1.Secret
	err     error
	expires time.Time
}

// New reads with kube; a Secret read is reused for ttl.
func New(kube kubernetes.Interface, ttl time.Duration) *Cache {
	life, end := context.WithCancel(context.Background())
	return &Cache{kube: kube, ttl: ttl, now: time.Now, life: life, end: end, entries: map[string]*secretEntry{}}
}

// Close ends the reads in flight and waits for them: nothing outlives the engine's run.
func (s *Cache) Close() {
	s.end()
	s.reads.Wait()
}

// SecretValue is the value of key in the Secret namespace/name (remote.SecretSource).
func (s *Cache) SecretValue(ctx context.Context, namespace, name, key string) ([]byte, error) {
	sec, err := s.get(ctx, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", namespace, name, err)
	}
	v, ok := sec.Data[key]
	if !ok {
		return nil, fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return v, nil
}

// Secret is the Secret namespace/name itself, shared with every other reader within the
// TTL (target.SecretGetter: a target's kubeconfig, whose resourceVersion tells a rotation).
// The caller must not change it.
func (s *Cache) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return s.get(ctx, namespace, name)
}

func (s *Cache) get(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	id := namespace + "/" + name
	s.mu.Lock()
	e := s.entries[id]
	if e == nil || (isDone(e.ready) && !s.now().Before(e.expires)) {
		s.sweep()
		e = &secretEntry{ready: make(chan struct{})}
		s.entries[id] = e
		s.reads.Go(func() { s.read(e, namespace, name) })
	}
	s.mu.Unlock()
	select {
	case <-e.ready:
		return e.secret, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// read GETs the Secret for every caller waiting on e, under a timeout of its own and the
// engine's life rather than the context of the caller that happened to start it: one caller
// giving up must not fail the read for the others.
func (s *Cache) read(e *secretEntry, namespace, name string) {
	ctx, cancel := context.WithTimeout(s.life, readTimeout)
	defer cancel()
	e.secret, e.err = s.kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	e.expires = s.now().Add(s.ttl)
	if e.err != nil {
		e.expires = s.now() // a failure is not remembered: the next call asks again
	}
	close(e.ready)
}

// sweep forgets the Secrets whose TTL passed, at most once per TTL, so that the cache holds
// only Secrets in use: with a templated secretRef name there is one per CR. s.mu is held.
func (s *Cache) sweep() {
	now := s.now()
	if now.Sub(s.lastSweep) < s.ttl {
		return
	}
	s.lastSweep = now
	for id, e := range s.entries {
		if isDone(e.ready) && !now.Before(e.expires) {
			delete(s.entries, id)
		}
	}
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
