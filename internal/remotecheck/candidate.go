package remotecheck

import (
	"context"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/rollout"
)

// CandidateAnswer is a candidate reconciler's answer to one request (Options.Candidate),
// compared with the checked reconciler's as ork run's shadow mode compares them.
type CandidateAnswer struct {
	Status int    `json:"status"`
	Reason string `json:"reason"`
	// Divergences are the differing field paths, never values; empty when the answers
	// agree, or when either did not succeed (nothing to compare).
	Divergences []string `json:"divergences"`
}

// candidateCRD is crd calling url as its candidate: the candidate block's auth and timeout
// when the Katalog declares one, else the checked reconciler's.
func candidateCRD(crd *katalog.CRD, url string) *katalog.CRD {
	c := crd.WithEndpoint(url)
	if c == crd {
		cp := *crd
		c = &cp
	}
	rem := *c.OperatorBox.Reconcile.Remote
	if cand := rem.Candidate; cand != nil {
		if cand.Auth != nil {
			rem.Auth = cand.Auth
		}
		if cand.Timeout != "" {
			rem.Timeout = cand.Timeout
		}
	}
	rem.Candidate = nil
	c.OperatorBox.Reconcile.Remote = &rem
	return c
}

// compare sends req to the candidate and compares its answer with the checked one's.
func (ck *checker) compare(ctx context.Context, req remote.Request, res *remote.Result, err error) *CandidateAnswer {
	cres, x, cerr := ck.cand.Call(ctx, req)
	out := &CandidateAnswer{Status: x.StatusCode, Reason: remote.Decide(cres, cerr).Reason, Divergences: []string{}}
	if err != nil || cerr != nil || res == nil || cres == nil {
		return out
	}
	paths, compared, failed := rollout.Compare(res, cres, ck.cr.GetNamespace(), ck.cr.GetName())
	if failed != "" {
		out.Reason = failed
	}
	if compared {
		out.Divergences = paths
	}
	return out
}
