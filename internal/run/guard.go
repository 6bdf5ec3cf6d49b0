package run

import "github.com/orkspace/ork/internal/leadership"

// errNotLeader refuses a write of a replica whose Lease may have passed to another
// (leadership.ErrNotLeader): the pass stops, and so does the run.
var errNotLeader = leadership.ErrNotLeader

// mayWrite is the leadership guard for the custom resource of key (leadership.MayWrite).
func (e *Engine) mayWrite(key string) error { return e.lead.MayWrite(key) }

// errLeadershipLost is the cause that ends a leader's run at once (leadership.ErrLost).
var errLeadershipLost = leadership.ErrLost
