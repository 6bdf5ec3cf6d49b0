package finalizer

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The patch sets the whole list computed from the object it carries the uid and
// resourceVersion of: another controller's entries stay, in their order.
func TestPatchKeepsOtherFinalizers(t *testing.T) {
	tests := []struct {
		name    string
		have    []string
		present bool
		want    string
	}{
		{"add to none", nil, true,
			`{"metadata":{"finalizers":["orkestra.orkspace.io/remote"],"resourceVersion":"7","uid":"u"}}`},
		{"add after another's", []string{"example.com/other"}, true,
			`{"metadata":{"finalizers":["example.com/other","orkestra.orkspace.io/remote"],"resourceVersion":"7","uid":"u"}}`},
		{"remove, another's stays", []string{"a.io/x", Name, "b.io/y"}, false,
			`{"metadata":{"finalizers":["a.io/x","b.io/y"],"resourceVersion":"7","uid":"u"}}`},
		{"remove the last: the key goes", []string{Name}, false,
			`{"metadata":{"finalizers":null,"resourceVersion":"7","uid":"u"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{}}
			obj.SetUID("u")
			obj.SetResourceVersion("7")
			obj.SetFinalizers(tt.have)
			if got := string(patch(obj, tt.present)); got != tt.want {
				t.Errorf("patch = %s\nwant    %s", got, tt.want)
			}
		})
	}
}
