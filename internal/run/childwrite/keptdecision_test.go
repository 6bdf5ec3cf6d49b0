package childwrite

import (
	"encoding/hex"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/naming"
)

// An apply that only repairs, or is sent because ork cannot prove its fields its own, keeps
// the decision that wrote the intent: a new id would make it a change on every pass.
func TestAnApplyOfTheSameIntentKeepsItsDecision(t *testing.T) {
	p := planned{decision: "new", digest: [32]byte{1}}
	same := hex.EncodeToString(p.digest[:])
	live := func(applied, decision string) metav1.Object {
		m := &metav1.ObjectMeta{Annotations: map[string]string{naming.AppliedAnnotation: applied}}
		if decision != "" {
			m.Annotations[naming.DecisionAnnotation] = decision
		}
		return m
	}
	for _, tt := range []struct {
		name  string
		live  metav1.Object
		owned bool
		want  string
	}{
		{"the same intent, owned: the decision that wrote it", live(same, "old"), true, "old"},
		{"another intent: this decision", live("ff", "old"), true, "new"},
		{"adopted: this decision", live(same, "old"), false, "new"},
		{"the same intent, written before decisions were recorded", live(same, ""), true, "new"},
	} {
		if got := keptDecision(p, tt.live, tt.owned); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
