package decision

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var t0 = time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)

func TestIDsSortByTimeAndCarryIt(t *testing.T) {
	zero := bytes.NewReader(make([]byte, 64))
	a, err := NewID(t0, zero)
	if err != nil {
		t.Fatal(err)
	}
	ff := bytes.NewReader(bytes.Repeat([]byte{0xff}, 64))
	b, err := NewID(t0.Add(time.Millisecond), bytes.NewReader(make([]byte, 64)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewID(t0, ff)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 26 || !(a < c && c < b) {
		t.Errorf("ids %s %s %s: want 26 characters, sorted by time before entropy", a, c, b)
	}
	got, err := IDTime(b)
	if err != nil || !got.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("IDTime(%s) = %v, %v; want %v", b, got, err, t0.Add(time.Millisecond))
	}
	if ValidID("not-an-id") || !ValidID(a) {
		t.Errorf("ValidID: a made-up id passes or a real one fails")
	}
}

func TestInputsDigest(t *testing.T) {
	base := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "App",
			"metadata": map[string]any{"name": "a", "namespace": "ns", "generation": int64(3),
				"labels": map[string]any{"team": "x"}, "annotations": map[string]any{"note": "y"}},
			"spec":   map[string]any{"replicas": int64(2), "image": "nginx:1"},
			"status": map[string]any{"observedGeneration": int64(2)},
		}}
	}
	related := map[string]string{"config": "41"}
	digest := func(t *testing.T, cr *unstructured.Unstructured, args any, related map[string]string) string {
		t.Helper()
		d, err := InputsDigest(InputsOf(cr, args, related))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := digest(t, base(), nil, related)
	if !strings.HasPrefix(want, "sha256:") || len(want) != len("sha256:")+64 {
		t.Fatalf("digest %q: want sha256: and 64 hex digits", want)
	}
	tests := []struct {
		name    string
		edit    func(cr *unstructured.Unstructured) (args any, related map[string]string)
		changes bool
	}{
		{"the same inputs", func(*unstructured.Unstructured) (any, map[string]string) { return nil, related }, false},
		{"the status changed", func(cr *unstructured.Unstructured) (any, map[string]string) {
			cr.Object["status"] = map[string]any{"observedGeneration": int64(3), "ready": true}
			return nil, related
		}, false},
		{"ork's own annotations", func(cr *unstructured.Unstructured) (any, map[string]string) {
			cr.SetAnnotations(map[string]string{"note": "y", Annotation: "01J", "orkestra.orkspace.io/operation": "{}"})
			return nil, related
		}, false},
		{"the resourceVersion changed", func(cr *unstructured.Unstructured) (any, map[string]string) {
			cr.SetResourceVersion("99")
			return nil, related
		}, false},
		{"the generation", func(cr *unstructured.Unstructured) (any, map[string]string) {
			cr.SetGeneration(4)
			return nil, related
		}, true},
		{"the spec", func(cr *unstructured.Unstructured) (any, map[string]string) {
			cr.Object["spec"].(map[string]any)["replicas"] = int64(3)
			return nil, related
		}, true},
		{"a label", func(cr *unstructured.Unstructured) (any, map[string]string) {
			cr.SetLabels(map[string]string{"team": "z"})
			return nil, related
		}, true},
		{"a user's annotation", func(cr *unstructured.Unstructured) (any, map[string]string) {
			cr.SetAnnotations(map[string]string{"note": "y", "orkestra.orkspace.io/reconciler": "candidate"})
			return nil, related
		}, true},
		{"the rendered args", func(*unstructured.Unstructured) (any, map[string]string) {
			return map[string]any{"tier": "gold"}, related
		}, true},
		{"a related object's resourceVersion", func(*unstructured.Unstructured) (any, map[string]string) {
			return nil, map[string]string{"config": "42"}
		}, true},
		{"a related object gone", func(*unstructured.Unstructured) (any, map[string]string) {
			return nil, nil
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := base()
			args, rel := tt.edit(cr)
			if got := digest(t, cr, args, rel); (got != want) != tt.changes {
				t.Errorf("digest changed: %v, want %v", got != want, tt.changes)
			}
		})
	}
}

func TestLastDecisionStatusRoundTrip(t *testing.T) {
	d := LastDecision{ID: "01JEXAMPLE0000000000000000", Time: t0, Trigger: "update", Inputs: "sha256:ab",
		Reconciler: Reconciler{Side: "stable", Version: "1.4.2"}, Target: "orkestra-system/spoke-a-kubeconfig[kubeconfig]",
		Children: "sha256:cd", RequeueAfter: "30s"}
	cr := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{StatusField: d.Status()}}}
	got, ok, err := FromStatus(cr)
	if err != nil || !ok || got != d {
		t.Errorf("FromStatus(Status()) = %+v, %v, %v; want %+v", got, ok, err, d)
	}
	if _, ok, err := FromStatus(&unstructured.Unstructured{Object: map[string]any{}}); ok || err != nil {
		t.Errorf("FromStatus of a CR without one: ok %v, err %v", ok, err)
	}
	// The status write is a merge patch: what a record lacks of an earlier one's reconciler
	// is sent as null, so that it goes.
	if v, ok := (LastDecision{ID: "x"}).Status()["reconciler"]; !ok || v != nil {
		t.Errorf("a record without a reconciler sends reconciler %v (present %v), want null to remove the earlier one", v, ok)
	}
	// A pass back on the local cluster removes the target an earlier record named.
	if v, ok := (LastDecision{ID: "x"}).Status()["target"]; !ok || v != nil {
		t.Errorf("a record of the local cluster sends target %v (present %v), want null to remove the earlier one", v, ok)
	}
	for _, k := range []string{"children", "requeueAfter"} {
		if v, ok := (LastDecision{ID: "x"}).Status()[k]; !ok || v != nil {
			t.Errorf("a record without %s sends %v (present %v), want null to remove the earlier one's", k, v, ok)
		}
	}
	side := (LastDecision{ID: "x", Reconciler: Reconciler{Side: "stable"}}).Status()["reconciler"].(map[string]any)
	if v, ok := side["version"]; !ok || v != nil || side["side"] != "stable" {
		t.Errorf("a record with a side only sends reconciler %v, want version null", side)
	}
}

func TestEntryCheck(t *testing.T) {
	id, _ := NewID(t0, bytes.NewReader(make([]byte, 16)))
	tests := []struct {
		name string
		e    Entry
		ok   bool
	}{
		{"a valid entry", Entry{Decision: id, Outcome: "error", Reason: "Conflict"}, true},
		{"not a decision id", Entry{Decision: "pass-1"}, false},
		{"a reason with spaces", Entry{Decision: id, Reason: "password is hunter2"}, false},
		{"a child's free-text reason", Entry{Decision: id, Children: []Child{{Reason: "value=hunter2"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.e.Check(); (err == nil) != tt.ok {
				t.Errorf("Check() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// A Secret's data never reaches an entry: only its paths do.
func TestSecretValuesNeverReachAnEntry(t *testing.T) {
	before := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "7"},
		"data":     map[string]any{"password": "aHVudGVyMg=="}, "stringData": map[string]any{"token": "s3cr3t-old"}}
	after := map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "ns", "resourceVersion": "8"},
		"data":     map[string]any{"password": "Y29ycmVjdGhvcnNl", "user": "YWRtaW4="}, "stringData": map[string]any{"token": "s3cr3t-new"}}
	id, _ := NewID(t0, bytes.NewReader(make([]byte, 16)))
	e := Entry{Decision: id, Time: t0, Trigger: "update", Outcome: "ok",
		Children: []Child{{Ref: Ref{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "db"},
			ResourceVersionBefore: "7", ResourceVersionAfter: "8", Fields: ChangedFields(before, after), Outcome: ChildApplied}}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"aHVudGVyMg==", "Y29ycmVjdGhvcnNl", "YWRtaW4=", "hunter2", "correcthorse", "admin", "s3cr3t"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the entry holds %q: %s", secret, b)
		}
	}
	if want := []string{"data.password", "data.user", "stringData.token"}; !slices.Equal(e.Children[0].Fields.Paths(), want) {
		t.Errorf("fields %v, want %v", e.Children[0].Fields.Paths(), want)
	}
}
