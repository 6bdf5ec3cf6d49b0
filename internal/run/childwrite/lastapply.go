package childwrite

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/trace"
)

// EntryOf names one resource of a result the way the result did: an intent entry by type,
// a full object by apiVersion and kind. The namespace is the entry's own, if it gave one.
func EntryOf(raw map[string]any) remote.AppliedResource {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	if typ := str(raw, "type"); typ != "" {
		fields, _ := raw["fields"].(map[string]any)
		return remote.AppliedResource{Type: typ, Name: str(fields, "name"), Namespace: str(fields, "namespace")}
	}
	md, _ := raw["metadata"].(map[string]any)
	return remote.AppliedResource{APIVersion: str(raw, "apiVersion"), Kind: str(raw, "kind"),
		Name: str(md, "name"), Namespace: str(md, "namespace")}
}

// LastApplyOf is what applying a result's entries did: the apply report's outcome of each
// (in the result's order), or, when nothing got as far as a write, the pass's failure for
// all. ns is the CR's namespace, where an entry without one went.
func LastApplyOf(entries []remote.AppliedResource, rep Report, failure, ns string) []remote.AppliedResource {
	out := make([]remote.AppliedResource, len(entries))
	firstFailed := slices.IndexFunc(rep.Objects, func(a trace.Apply) bool { return a.Outcome == trace.Failed })
	for i, e := range entries {
		out[i] = e
		if i >= len(rep.Objects) {
			// Refused before any write: an invalid entry, an undeclared type.
			out[i].Outcome, out[i].Message = remote.OutcomeError, failure
			if out[i].Namespace == "" {
				out[i].Namespace = ns
			}
			continue
		}
		o := rep.Objects[i]
		out[i].Namespace = o.Namespace
		switch o.Outcome {
		case trace.Created, trace.Updated:
			out[i].Outcome = remote.OutcomeApplied
		case trace.Unchanged:
			out[i].Outcome = remote.OutcomeUnchanged
		case trace.Failed:
			out[i].Outcome, out[i].Message = remote.OutcomeError, o.Error
			if m := rep.conflicts[i]; len(m) > 0 {
				out[i].Outcome, out[i].ConflictingManagers = remote.OutcomeConflict, m
			}
		default:
			out[i].Outcome, out[i].Message = remote.OutcomeError, "not applied: an earlier resource failed"
			if firstFailed >= 0 {
				out[i].Message = fmt.Sprintf("not applied: resources[%d] failed first", firstFailed)
			}
		}
	}
	return out
}

// conflictingManagers names the field managers of a server-side apply conflict, from the
// causes of the apiserver's answer ("conflict with \"kubectl-edit\" using apps/v1"), sorted
// and once each.
func conflictingManagers(err error) []string {
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	var out []string
	for _, cause := range status.Status().Details.Causes {
		if cause.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		rest, ok := strings.CutPrefix(cause.Message, "conflict with ")
		if !ok {
			continue
		}
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			if name, err := strconv.Unquote(q); err == nil && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}
