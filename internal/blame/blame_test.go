package blame

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/orkspace/ork/internal/decision"
)

var t0 = time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)

func id(t *testing.T, i int) string {
	t.Helper()
	s, err := decision.NewID(t0.Add(time.Duration(i)*time.Minute), bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 16)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ork's apply of the deployment: replicas, the selector (atomic) and the app container.
const orkFields = `{"f:metadata":{"f:annotations":{"f:orkestra.orkspace.io/decision":{}},"f:finalizers":{"v:\"example.com/keep\"":{}}},` +
	`"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:name":{},"f:image":{}}}}}}}`

// orkFieldsWithoutReplicas is ork's entry after another manager took replicas.
var orkFieldsWithoutReplicas = strings.Replace(orkFields, `"f:replicas":{},`, "", 1)

const hpaFields = `{"f:spec":{"f:replicas":{}}}`

func managed(entries ...metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry { return entries }

func entry(manager string, op metav1.ManagedFieldsOperationType, minute int, fields string) metav1.ManagedFieldsEntry {
	tm := metav1.NewTime(t0.Add(time.Duration(minute) * time.Minute))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "apps/v1", Time: &tm,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func deployment(decisionID string, mf []metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "finalizers": []any{"example.com/keep"}},
		"spec": map[string]any{"replicas": int64(3),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "sidecar", "image": "envoy:1"},
				map[string]any{"name": "app", "image": "nginx:2"},
			}}}},
	}}
	if decisionID != "" {
		u.SetAnnotations(map[string]string{decision.Annotation: decisionID})
	}
	u.SetManagedFields(mf)
	return u
}

func owner(last *decision.LastDecision) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "generation": int64(2)}}}
	if last != nil {
		u.Object["status"] = map[string]any{decision.StatusField: last.Status()}
	}
	return u
}

var child = decision.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web"}

// decisionLog: 1 creates the deployment (generation 1), 2 changes replicas after the
// related ConfigMap changed, 3 changes the image after a spec edit (generation 2).
func decisionLog(t *testing.T) []Logged {
	t.Helper()
	created := decision.ChangedFields(nil, map[string]any{"spec": map[string]any{"replicas": int64(1),
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{}, map[string]any{"name": "app", "image": "nginx:1"}}}}}})
	replicas := decision.ChangedFields(map[string]any{"spec": map[string]any{"replicas": int64(1)}}, map[string]any{"spec": map[string]any{"replicas": int64(3)}})
	image := decision.ChangedFields(
		map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{}, map[string]any{"image": "nginx:1"}}}}}},
		map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{}, map[string]any{"image": "nginx:2"}}}}}})
	cr := func(gen int64, rv string) decision.Object {
		return decision.Object{Ref: decision.Ref{APIVersion: "example.com/v1", Kind: "App", Namespace: "ns", Name: "web"}, Generation: gen, ResourceVersion: rv}
	}
	cm := []decision.Related{{Name: "config", Ref: decision.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "web-config"}, ResourceVersion: "501"}}
	other := decision.Child{Ref: decision.Ref{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "web"}, Fields: replicas, Outcome: decision.ChildApplied}
	return []Logged{
		{1, decision.Entry{Decision: id(t, 1), Time: t0.Add(time.Minute), Trigger: "create", Object: cr(1, "100"), Outcome: "ok",
			Children: []decision.Child{{Ref: child, Fields: created, Outcome: decision.ChildCreated}}}},
		{2, decision.Entry{Decision: id(t, 2), Time: t0.Add(2 * time.Minute), Trigger: "related", Object: cr(1, "100"), Related: cm, Outcome: "ok",
			Children: []decision.Child{{Ref: child, Fields: replicas, Outcome: decision.ChildApplied}}}},
		{3, decision.Entry{Decision: id(t, 3), Time: t0.Add(3 * time.Minute), Trigger: "update", Object: cr(2, "140"), Outcome: "ok",
			Children: []decision.Child{{Ref: child, Fields: image, Outcome: decision.ChildApplied}, other}}},
		{4, decision.Entry{Decision: id(t, 4), Time: t0.Add(4 * time.Minute), Trigger: "resync", Object: cr(2, "140"), Outcome: "ok",
			Children: []decision.Child{{Ref: child, Fields: replicas, Outcome: decision.ChildFailed, Reason: "Conflict"}}}},
	}
}

func TestBlame(t *testing.T) {
	orkOnly := managed(entry("orkestra", metav1.ManagedFieldsOperationApply, 3, orkFields))
	hpaTook := managed(entry("orkestra", metav1.ManagedFieldsOperationApply, 3, orkFieldsWithoutReplicas),
		entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, 5, hpaFields))
	shared := managed(entry("orkestra", metav1.ManagedFieldsOperationApply, 3, orkFields),
		entry("gitops", metav1.ManagedFieldsOperationApply, 5, hpaFields))
	last3 := &decision.LastDecision{ID: id(t, 3), Time: t0.Add(3 * time.Minute), Trigger: "update", Inputs: "sha256:x", Reconciler: decision.Reconciler{Version: "1.2.0"}}
	last4 := &decision.LastDecision{ID: id(t, 4), Time: t0.Add(4 * time.Minute), Trigger: "resync"}
	tests := []struct {
		name    string
		q       Query
		want    Answer // compared on the fields below
		owners  []string
		summary string
		note    string // a note that must be among the answer's
	}{
		{name: "the image, from the log: the spec edit",
			q:       Query{Child: deployment(id(t, 3), orkOnly), Owner: owner(last3), Log: decisionLog(t), HasLog: true, Field: "spec.template.spec.containers[1].image"},
			want:    Answer{ByOrk: true, Decision: id(t, 3), Source: SourceLog, Trigger: "update", Generation: 2, ResourceVersion: "140", LogLine: 3},
			owners:  []string{"orkestra"},
			summary: "spec.template.spec.containers[1].image was set by ork's decision " + id(t, 3)},
		{name: "replicas, from the log: the related ConfigMap",
			q:      Query{Child: deployment(id(t, 3), orkOnly), Owner: owner(last3), Log: decisionLog(t), HasLog: true, Field: "spec.replicas"},
			want:   Answer{ByOrk: true, Decision: id(t, 2), Source: SourceLog, Trigger: "related", Generation: 1, ResourceVersion: "100", LogLine: 2},
			owners: []string{"orkestra"}},
		{name: "a whole container: the latest entry below it",
			q:      Query{Child: deployment(id(t, 3), orkOnly), Log: decisionLog(t), HasLog: true, Field: "spec.template.spec.containers[1]"},
			want:   Answer{ByOrk: true, Decision: id(t, 3), Source: SourceLog, Trigger: "update", Generation: 2, ResourceVersion: "140", LogLine: 3},
			owners: []string{"orkestra"}},
		{name: "replicas taken by another manager since",
			q:       Query{Child: deployment(id(t, 3), hpaTook), Owner: owner(last3), Log: decisionLog(t), HasLog: true, Field: "spec.replicas"},
			want:    Answer{Decision: id(t, 2), Source: SourceLog, Trigger: "related", Generation: 1, ResourceVersion: "100", LogLine: 2},
			owners:  []string{"kube-controller-manager"},
			summary: "spec.replicas was changed by kube-controller-manager at 2026-12-06T22:05:00Z since ork's decision " + id(t, 2)},
		{name: "replicas shared with another applier: ork still holds it",
			q:      Query{Child: deployment(id(t, 3), shared), Log: decisionLog(t), HasLog: true, Field: "spec.replicas"},
			want:   Answer{ByOrk: true, Decision: id(t, 2), Source: SourceLog, Trigger: "related", Generation: 1, ResourceVersion: "100", LogLine: 2},
			owners: []string{"gitops", "orkestra"}},
		{name: "without the log: the annotation and the owner's last decision",
			q:       Query{Child: deployment(id(t, 3), orkOnly), Owner: owner(last3), Field: "spec.template.spec.containers[1].image"},
			want:    Answer{ByOrk: true, Decision: id(t, 3), Source: SourceAnnotation, Trigger: "update", Reconciler: decision.Reconciler{Version: "1.2.0"}},
			owners:  []string{"orkestra"},
			summary: "spec.template.spec.containers[1].image is held by ork; the object was last written by ork's decision " + id(t, 3),
			note:    "per-field answers need the decision log"},
		{name: "without the log, the owner decided since without writing the object",
			q:      Query{Child: deployment(id(t, 3), orkOnly), Owner: owner(last4), Field: "spec.replicas"},
			want:   Answer{ByOrk: true, Decision: id(t, 3), Source: SourceAnnotation},
			owners: []string{"orkestra"},
			note:   "a later pass that did not write this object"},
		{name: "a log that never changed the field falls back to the annotation",
			q:      Query{Child: deployment(id(t, 3), orkOnly), Owner: owner(last3), Log: decisionLog(t)[2:], HasLog: true, Field: "spec.replicas"},
			want:   Answer{ByOrk: true, Decision: id(t, 3), Source: SourceAnnotation, Trigger: "update", Reconciler: decision.Reconciler{Version: "1.2.0"}},
			owners: []string{"orkestra"},
			note:   "no entry of the decision log changed the field"},
		{name: "an entry without its field paths",
			q: Query{Child: deployment(id(t, 3), orkOnly), Log: func() []Logged {
				l := decisionLog(t)
				l[2].Entry = l[2].Entry.DropFields()
				return l
			}(), HasLog: true, Field: "spec.replicas"},
			want:   Answer{ByOrk: true, Decision: id(t, 3), Source: SourceLog, Trigger: "update", Generation: 2, ResourceVersion: "140", LogLine: 3},
			owners: []string{"orkestra"},
			note:   "left out its field paths"},
		{name: "an atomic map owns what is below it",
			q:      Query{Child: deployment("", orkOnly), Field: "spec.selector.matchLabels.app"},
			want:   Answer{ByOrk: true},
			owners: []string{"orkestra"}, note: "carries no orkestra.orkspace.io/decision annotation"},
		{name: "a set item by value",
			q:      Query{Child: deployment("", orkOnly), Field: "metadata.finalizers[0]"},
			want:   Answer{ByOrk: true},
			owners: []string{"orkestra"}},
		{name: "a container ork does not write",
			q:       Query{Child: deployment("", orkOnly), Field: "spec.template.spec.containers[0].image"},
			want:    Answer{},
			summary: "spec.template.spec.containers[0].image is owned by no field manager",
			note:    "no field manager owns the field"},
		{name: "an index past the list",
			q:    Query{Child: deployment("", orkOnly), Field: "spec.template.spec.containers[5].image"},
			want: Answer{}},
		{name: "no owner readable",
			q:      Query{Child: deployment(id(t, 3), orkOnly), Field: "spec.replicas"},
			want:   Answer{ByOrk: true, Decision: id(t, 3), Source: SourceAnnotation},
			owners: []string{"orkestra"}, note: "could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Blame(tt.q)
			if err != nil {
				t.Fatal(err)
			}
			got := Answer{ByOrk: a.ByOrk, Decision: a.Decision, Source: a.Source, Trigger: a.Trigger, Generation: a.Generation,
				ResourceVersion: a.ResourceVersion, LogLine: a.LogLine, Reconciler: a.Reconciler}
			if got.Reconciler != tt.want.Reconciler || got.ByOrk != tt.want.ByOrk || got.Decision != tt.want.Decision || got.Source != tt.want.Source ||
				got.Trigger != tt.want.Trigger || got.Generation != tt.want.Generation || got.ResourceVersion != tt.want.ResourceVersion || got.LogLine != tt.want.LogLine {
				t.Errorf("answer %+v\nwant   %+v", got, tt.want)
			}
			var owners []string
			for _, o := range a.Owners {
				owners = append(owners, o.Manager)
			}
			if !slices.Equal(owners, tt.owners) {
				t.Errorf("owners %v, want %v", owners, tt.owners)
			}
			if tt.summary != "" && a.Summary() != tt.summary {
				t.Errorf("summary %q\nwant    %q", a.Summary(), tt.summary)
			}
			if tt.note != "" && !slices.ContainsFunc(a.Notes, func(n string) bool { return strings.Contains(n, tt.note) }) {
				t.Errorf("notes %q lack %q", a.Notes, tt.note)
			}
		})
	}
}

func TestBlameRelatedFromTheLog(t *testing.T) {
	a, err := Blame(Query{Child: deployment(id(t, 3), managed(entry("orkestra", metav1.ManagedFieldsOperationApply, 3, orkFields))),
		Log: decisionLog(t), HasLog: true, Field: "spec.replicas"})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Related) != 1 || a.Related[0].Ref.Name != "web-config" || a.Related[0].ResourceVersion != "501" {
		t.Errorf("related %+v, want the ConfigMap web-config at 501", a.Related)
	}
}

func TestBlameRefusesABadPath(t *testing.T) {
	if _, err := Blame(Query{Child: deployment("", nil), Field: "spec..replicas"}); err == nil {
		t.Errorf("no error for a malformed path")
	}
}
