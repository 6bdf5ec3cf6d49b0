package rollout

import (
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/remote"
)

// AnswerOf is a decoded result as a comparison sees it: the objects the shared planner
// would build from its resources. failed is the reason ork run would fail the pass with
// when they do not build.
func AnswerOf(res *remote.Result, namespace, name string) (a Answer, failed string) {
	a = Answer{Result: res.Result, RequeueAfter: res.RequeueAfter, Status: res.Status}
	built, errs := planner.Build(res.Resources, namespace, name)
	if v := planner.Verdict(errs); v != nil {
		return a, v.Reason
	}
	for _, o := range built {
		a.Objects = append(a.Objects, o.Obj)
	}
	return a, ""
}

// Compare returns where candidate's answer differs from stable's for the custom resource
// namespace/name, as live shadow mode, ork remote check --candidate and ork rollout diff
// all judge it. compared is false when either answer's objects do not build (nothing to
// compare: a stable answer ork would refuse says nothing of the candidate); failed is the
// candidate's reason when its own do not.
func Compare(stable, candidate *remote.Result, namespace, name string) (paths []string, compared bool, failed string) {
	s, sfailed := AnswerOf(stable, namespace, name)
	c, failed := AnswerOf(candidate, namespace, name)
	if sfailed != "" || failed != "" {
		return nil, false, failed
	}
	return Diff(s, c), true, ""
}
