package reconcilertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestDiffNamesTheDifferingFields(t *testing.T) {
	const dep = `{"type":"deployment","fields":{"name":"web","image":"nginx","replicas":2}}`
	for _, tc := range []struct {
		name             string
		recorded, answer string
		want             []string
	}{
		{"same", `{"result":"ok","resources":[` + dep + `]}`, `{"resources":[` + dep + `]}`, nil},
		{"result", `{"result":"ok"}`, `{"result":"requeue"}`, []string{"result"}},
		{"requeueAfter by value", `{"requeueAfter":"60s"}`, `{"requeueAfter":"1m"}`, nil},
		{"requeueAfter", `{"requeueAfter":"60s"}`, `{}`, []string{"requeueAfter"}},
		{"empty status is none", `{"status":{}}`, `{"status":null}`, nil},
		{"status field", `{"status":{"phase":"Ready","n":1}}`, `{"status":{"phase":"Pending","n":1.0}}`, []string{"status.phase"}},
		{"dotted key", `{"status":{"a.b":1}}`, `{"status":{"a.b":2}}`, []string{`status.a\.b`}},
		{"list lengths", `{"status":{"l":[1,2]}}`, `{"status":{"l":[1]}}`, []string{"status.l"}},
		{"list element", `{"status":{"l":[1,2]}}`, `{"status":{"l":[1,3]}}`, []string{"status.l[1]"}},
		{"intent field", `{"resources":[` + dep + `]}`, `{"resources":[{"type":"deployment","fields":{"name":"web","image":"nginx","replicas":3}}]}`,
			[]string{"objects[apps/v1 Deployment default/web].fields.replicas"}},
		{"a string spelling the number", `{"resources":[` + dep + `]}`, `{"resources":[{"type":"deployment","fields":{"name":"web","image":"nginx","replicas":"2"}}]}`, nil},
		{"object only on one side", `{"resources":[` + dep + `]}`, `{"resources":[]}`, []string{"objects[apps/v1 Deployment default/web]"}},
		{"namespace of the fields", `{"resources":[{"type":"service","fields":{"name":"s","port":80,"namespace":"other"}}]}`, `{}`,
			[]string{"objects[v1 Service other/s]"}},
		{"custom kind", `{"resources":[{"type":"custom","fields":{"apiVersion":"x.io/v1","kind":"DB","name":"d"}}]}`, `{}`,
			[]string{"objects[x.io/v1 DB default/d]"}},
		{"full object, server fields ignored",
			`{"resources":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"1"},"data":{"a":"1"}}]}`,
			`{"resources":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":{"a":"2"}}]}`,
			[]string{"objects[v1 ConfigMap default/c].data.a", "objects[v1 ConfigMap default/c].metadata.namespace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Diff([]byte(tc.recorded), []byte(tc.answer), "default")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Diff = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDiffIsBounded(t *testing.T) {
	var a, b []string
	for i := range 60 {
		a = append(a, fmt.Sprintf(`"k%02d":1`, i))
		b = append(b, fmt.Sprintf(`"k%02d":2`, i))
	}
	got, err := Diff([]byte(`{"status":{`+strings.Join(a, ",")+`}}`), []byte(`{"status":{`+strings.Join(b, ",")+`}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != maxPaths+1 || got[maxPaths] != "… and 10 more" {
		t.Errorf("%d paths, last %q", len(got), got[len(got)-1])
	}
}

func TestDiffRejectsWhatIsNoAnswer(t *testing.T) {
	for _, body := range []string{`[`, `{"requeueAfter":"soon"}`, `{"resources":[{"type":"nope","fields":{}}]}`} {
		if _, err := Diff([]byte(`{}`), []byte(body), ""); err == nil {
			t.Errorf("%s: want an error", body)
		}
	}
}
