package remotecheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/planner"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/resources"
)

const (
	schemaHint = "see schema/remote-reconcile-result.schema.json; editors that know JSON Schema check answers as you write them"
	buildHint  = "ork applies nothing of this answer (InvalidResource); the intent types and their fields: docs/remote-reconciler.md#the-intent-form"
	// placementHint is for an entry that builds but that ork cannot place.
	placementHint = "ork applies nothing of this answer (InvalidResource): set metadata.namespace on a namespaced object of a cluster-scoped resource, keep children in the namespaces ork watches, and leave the controller ownerReference to ork; see docs/remote-reconciler.md#resources"
	resultHint    = "ork sets Ready=False with this text and retries with backoff: the custom resource checked should reconcile"
)

// judgement collects one answer's violations. Schema violations that repeat what ork's
// own decoder or builders said about the same value are left out: those name ork's
// actual behaviour.
type judgement struct {
	request string
	vs      []Violation
	covered []string
	// reason and message replace ork's verdict on a successful answer that ork would
	// still not apply, as ork run would report it.
	reason, message string
}

func (j *judgement) add(severity, check, path, msg, hint string) {
	j.vs = append(j.vs, Violation{Severity: severity, Request: j.request, Path: path, Check: check, Message: msg, Hint: hint})
}

// cover marks path as reported by an authoritative check.
func (j *judgement) cover(path string) { j.covered = append(j.covered, path) }

// covers reports whether an authoritative check reported path or what holds it.
func (j *judgement) covers(path string) bool {
	return slices.ContainsFunc(j.covered, func(c string) bool { return within(path, c) })
}

func (j *judgement) result() []Violation {
	var out []Violation
	for _, v := range j.vs {
		if v.Check == CheckSchema && slices.ContainsFunc(j.covered, func(c string) bool { return within(v.Path, c) }) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// within reports whether path is prefix or below it ("$" holds everything).
func within(path, prefix string) bool {
	return prefix == "$" || path == prefix || strings.HasPrefix(path, prefix+".") || strings.HasPrefix(path, prefix+"[")
}

// judgeAnswer judges a 200 body by the schema, by ork's decoder, and (for a success) each
// resource by the intent builders and managedResources. It returns the objects ork would
// apply, nil when it would apply nothing.
func (ck *checker) judgeAnswer(j *judgement, t remote.Trigger, body []byte, res *remote.Result, err error) []resources.Object {
	for _, v := range ck.schema.ResultViolations(body) {
		j.add(Error, CheckSchema, jsonPath(v.Path), v.Message, schemaHint)
	}
	var ce *remote.CallError
	if errors.As(err, &ce) {
		switch ce.Kind {
		case remote.KindErrorResult:
			j.add(Error, CheckResult, "$.result", ce.Message, resultHint)
		case remote.KindInvalidJSON, remote.KindTooLarge, remote.KindUnknownResult, remote.KindInvalidResult:
			p := decoderPath(ce)
			j.add(Error, CheckDecoder, p, ce.Message, decoderHint(ce.Kind))
			j.cover(p)
			if t != remote.TriggerDelete && ce.Kind != remote.KindTooLarge {
				// ork stops at the first thing its decoder rejects; a reconciler's author
				// wants every mistake of the answer at once, so its entries are judged too.
				ck.judgeEntries(j, rawEntries(body))
			}
		}
		return nil
	}
	if res == nil {
		return nil
	}
	if t == remote.TriggerDelete {
		if len(res.Resources) > 0 || res.Status != nil {
			j.add(Warning, CheckResult, "$", fmt.Sprintf("ork ignores the status and the %d resources of an answer while the resource is being deleted", len(res.Resources)),
				"answer {\"result\": \"ok\"} when prepared.deleting is true: the children carry ownerReferences and the garbage collector removes them")
		}
		return nil
	}
	entries := make([]entry, len(res.Resources))
	for i, r := range res.Resources {
		entries[i] = entry{i, r}
	}
	built, errs := ck.judgeEntries(j, entries)
	if f := planner.Verdict(errs); f != nil {
		j.reason, j.message = f.Reason, f.Message
	}
	return built
}

// entry is one object of an answer's resources and its index there.
type entry struct {
	index int
	raw   map[string]any
}

// judgeEntries builds and plans each entry as ork would and reports what the builders,
// managedResources and the placement rules reject, each at the entry's own index. It
// returns the objects as ork would apply them (owned, labelled, with the applied digest).
func (ck *checker) judgeEntries(j *judgement, entries []entry) ([]resources.Object, []planner.EntryError) {
	raws := make([]map[string]any, len(entries))
	for i, e := range entries {
		raws[i] = e.raw
	}
	children, errs := ck.types.Build(raws, ck.cr, ck.force)
	built := make([]resources.Object, len(children))
	for i, c := range children {
		built[i] = resources.Object{Obj: c.Obj}
	}
	if errs != nil {
		built = nil
	}
	for k, e := range errs {
		// Build counts in raws; the answer's own index is the entry's.
		raw := entries[e.Index].raw
		e.Index = entries[e.Index].index
		errs[k] = e
		at := fmt.Sprintf("$.resources[%d]", e.Index)
		switch {
		case e.Stage == planner.Undeclared:
			j.add(Error, CheckManaged, at, e.Error(),
				fmt.Sprintf("declare the type in %s.managedResources, or stop returning it: ork applies nothing of an answer with an undeclared type", ck.katalogAt))
		case e.Stage == planner.Unplaceable:
			j.add(Error, CheckBuild, at, e.Error(), placementHint)
			j.cover(at)
		case !j.covers(at): // the decoder may have named this entry already
			j.add(Error, CheckBuild, entryPath(e.Index, raw, e.Err), e.Error(), buildHint)
			j.cover(at)
		}
	}
	return built, errs
}

// rawEntries are the objects among a body's resources, for a body ork's decoder rejected:
// none when the body is no JSON object or its resources no list.
func rawEntries(body []byte) []entry {
	var doc struct {
		Resources []any `json:"resources"`
	}
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	var out []entry
	for i, r := range doc.Resources {
		if m, ok := r.(map[string]any); ok {
			out = append(out, entry{i, m})
		}
	}
	return out
}

// decoderPath locates what ork's decoder rejected, from its message.
func decoderPath(ce *remote.CallError) string {
	switch ce.Kind {
	case remote.KindUnknownResult:
		return "$.result"
	case remote.KindInvalidResult:
		return invalidResultPath(ce.Message)
	}
	if f, ok := quotedAfter(ce.Message, "unknown field "); ok {
		return jsonPath(strings.Split(f, "."))
	}
	if f, ok := quotedAfter(ce.Message, "field "); ok {
		return jsonPath(strings.Split(f, "."))
	}
	if i := strings.Index(ce.Message, "resources["); i >= 0 {
		if n, _, ok := strings.Cut(ce.Message[i+len("resources["):], "]"); ok {
			return "$.resources[" + n + "]"
		}
	}
	return "$"
}

// invalidResultPath locates an invalid requeueAfter or operation: the decoder's messages
// name operation fields as operation.<field>, and an id as "operation id" or "without an id".
func invalidResultPath(msg string) string {
	if !strings.Contains(msg, "operation") {
		return "$.requeueAfter"
	}
	if _, rest, ok := strings.Cut(msg, "operation."); ok {
		field, _, _ := strings.Cut(rest, " ")
		return "$.operation." + field
	}
	if strings.Contains(msg, "operation id") || strings.Contains(msg, "without an id") {
		return "$.operation.id"
	}
	return "$.operation"
}

// quotedAfter returns the Go-quoted string that follows prefix in s.
func quotedAfter(s, prefix string) (string, bool) {
	i := strings.Index(s, prefix+`"`)
	if i < 0 {
		return "", false
	}
	q, err := strconv.QuotedPrefix(s[i+len(prefix):])
	if err != nil {
		return "", false
	}
	v, err := strconv.Unquote(q)
	return v, err == nil
}

func decoderHint(k remote.Kind) string {
	switch k {
	case remote.KindUnknownResult:
		return "answer \"ok\", \"requeue\", \"pending\" or \"error\" (\"\" and absent count as ok)"
	case remote.KindInvalidResult:
		return "requeueAfter, operation.pollAfter and operation.deadline are Go durations (30s, 1m30s, 500ms); \"pending\" comes with an operation that has an id, and an operation only with \"pending\""
	case remote.KindTooLarge:
		return "answers are limited to 8 MiB: return fewer or smaller resources"
	}
	return "answer one JSON object (Content-Type: application/json) with only result, requeueAfter, error, status, resources and operation; field names are case-sensitive"
}

// entryPath locates a builder's error in resources[i]: fields of an intent entry are below
// "fields", those of a full object below the entry itself.
func entryPath(i int, raw map[string]any, err error) string {
	base := fmt.Sprintf("$.resources[%d]", i)
	var fe *resources.FieldError
	if !errors.As(err, &fe) || fe.Field == "" {
		return base
	}
	if intentShape(raw) {
		return base + ".fields." + fe.Field
	}
	return base + "." + fe.Field
}

// intentShape reports whether raw is a well-formed intent entry of a known type, so that
// a builder error in it is about one of its fields.
func intentShape(raw map[string]any) bool {
	if _, ok := raw["fields"].(map[string]any); !ok {
		return false
	}
	typ, _ := raw["type"].(string)
	if _, ok := resources.Lookup(typ); !ok {
		return false
	}
	for k, v := range raw {
		switch k {
		case "type", "fields":
		case "forceConflict":
			if _, ok := v.(bool); !ok && v != nil && v != "true" && v != "false" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// jsonPath writes JSON Pointer tokens as "$.resources[0].fields.image".
func jsonPath(tokens []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, t := range tokens {
		switch {
		case t != "" && strings.Trim(t, "0123456789") == "":
			b.WriteString("[" + t + "]")
		case identifier(t):
			b.WriteString("." + t)
		default:
			b.WriteString("[" + strconv.Quote(t) + "]")
		}
	}
	return b.String()
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '-'):
		default:
			return false
		}
	}
	return true
}

// judgeStability compares the second round's objects with the first's and reports whether
// they are the same.
func (ck *checker) judgeStability(j *judgement, before, after []resources.Object) bool {
	index := func(objs []resources.Object) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, o := range objs {
			m[o.Obj.GetNamespace()+" "+ck.types.Ref(o.Obj)] = withoutApplied(o.Obj)
		}
		return m
	}
	b, a := index(before), index(after)
	var diffs []string
	for _, k := range sortedKeys(a, b) {
		ref := k[strings.IndexByte(k, ' ')+1:]
		x, inB := b[k]
		y, inA := a[k]
		switch {
		case !inB:
			diffs = append(diffs, "+ "+ref+" (new)")
		case !inA:
			diffs = append(diffs, "- "+ref+" (no longer returned)")
		default:
			if d, differ := firstDiff(x, y, ""); differ {
				diffs = append(diffs, "~ "+ref+": "+d)
			}
		}
	}
	if len(diffs) == 0 {
		return true
	}
	j.add(Error, CheckStability, "$.resources", "the answer changed once its own children were sent back: "+strings.Join(diffs, "; "),
		"answer the same resources for the same custom resource whatever prepared.children holds: ork applies every answer and a changed child re-queues its owner, so an answer that moves with its children makes ork loop")
	return false
}

// withoutApplied is obj's content without ork's applied annotation, which ork sets anew on
// every write: a reconciler that sends back the child it got, annotation included, answers
// the same as one that does not.
func withoutApplied(obj *unstructured.Unstructured) map[string]any {
	if _, ok := obj.GetAnnotations()[naming.AppliedAnnotation]; !ok {
		return obj.Object
	}
	c := obj.DeepCopy()
	ann := c.GetAnnotations()
	delete(ann, naming.AppliedAnnotation)
	if len(ann) == 0 {
		ann = nil
	}
	c.SetAnnotations(ann)
	return c.Object
}

func sortedKeys(ms ...map[string]map[string]any) []string {
	var keys []string
	for _, m := range ms {
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// firstDiff finds the first path, in key order, where a and b differ.
func firstDiff(a, b any, path string) (string, bool) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if d, differ := firstDiff(am[k], bm[k], p); differ {
				return d, true
			}
		}
		return "", false
	}
	if reflect.DeepEqual(a, b) {
		return "", false
	}
	return fmt.Sprintf("%s was %s, now %s", path, show(a), show(b)), true
}

func show(v any) string {
	if v == nil {
		return "absent"
	}
	s := fmt.Sprintf("%v", v)
	if str, ok := v.(string); ok {
		s = strconv.Quote(str)
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}
