package crstatus

import (
	"slices"
	"sync"
)

// PrunedKeys are the top-level status keys a CRD's schema was seen to prune (the
// apiserver's `unknown field "status.<key>"` warning on ork's write). ork leaves them out of
// later writes: written again, they would be dropped again and the write (and its Event)
// would repeat on every pass. Kept for the life of the process: a CRD whose schema learns
// the key is written to again after a restart.
type PrunedKeys struct {
	mu   sync.Mutex
	keys map[string]bool
}

// Has reports whether key was seen pruned.
func (p *PrunedKeys) Has(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys[key]
}

// Add records keys and returns those not known before, sorted.
func (p *PrunedKeys) Add(keys []string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var fresh []string
	for _, k := range keys {
		if !p.keys[k] {
			if p.keys == nil {
				p.keys = map[string]bool{}
			}
			p.keys[k] = true
			fresh = append(fresh, k)
		}
	}
	slices.Sort(fresh)
	return fresh
}
