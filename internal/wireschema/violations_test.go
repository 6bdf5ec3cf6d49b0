package wireschema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResultViolationsLocateEachProblem(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		name     string
		body     string
		wantPath [][]string
		wantMsg  string
	}{
		{"valid", `{"result":"ok","resources":[{"type":"service","fields":{"name":"s","port":80}}]}`, nil, ""},
		{"wrong result value", `{"result":"done"}`, [][]string{{"result"}}, "value must be one of"},
		{"unknown intent field: only the intent branch of oneOf is reported",
			`{"resources":[{"type":"deployment","fields":{"name":"web","imagee":"nginx"}}]}`,
			[][]string{{"resources", "0", "fields"}, {"resources", "0", "fields", "imagee"}}, "missing property 'image'"},
		{"unknown intent field next to its required one",
			`{"resources":[{"type":"deployment","fields":{"name":"web","image":"nginx","imagee":"nginx"}}]}`,
			[][]string{{"resources", "0", "fields", "imagee"}}, "property \"imagee\" is not allowed here: value must be one of"},
		{"unknown top-level fields, each at its place", `{"Result":"ok","Status":{}}`, [][]string{{"Result"}, {"Status"}}, `property "Result" is not allowed here`},
		{"two problems, both reported", `{"result":"done","status":"Ready"}`, [][]string{{"result"}, {"status"}}, ""},
		{"not JSON", `<html>`, [][]string{nil}, "not valid JSON"},
		{"duplicate field", `{"result":"ok","result":"ok"}`, [][]string{nil}, "duplicate field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := v.ResultViolations([]byte(tt.body))
			var paths [][]string
			for _, g := range got {
				paths = append(paths, g.Path)
			}
			if d := cmp.Diff(tt.wantPath, paths); d != "" {
				t.Errorf("paths (-want +got):\n%s\n%+v", d, got)
			}
			if tt.wantMsg != "" && (len(got) == 0 || !strings.Contains(got[0].Message, tt.wantMsg)) {
				t.Errorf("violations %+v, want the first to mention %q", got, tt.wantMsg)
			}
		})
	}
}
