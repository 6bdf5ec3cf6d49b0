package childwrite

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A child write's "changed" is judged against what was there before the write, not against
// a cache that lags behind ork's own last write: an apply that returns the very version
// ork's last write returned changed nothing.
func TestApplyOntoALaggingCacheIsNoChange(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		cached, lastWritten, got string
		want                     bool
	}{
		{"the apply changed the object", "5", "5", "9", true},
		{"cache current, no-op apply", "5", "5", "5", false},
		{"cache lags behind ork's write, no-op apply", "5", "7", "7", false},
		{"cache lags, and the apply changed it", "5", "7", "9", true},
		{"nothing written before", "5", "", "9", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live, out := &metav1.ObjectMeta{ResourceVersion: tc.cached}, &metav1.ObjectMeta{ResourceVersion: tc.got}
			if got := applyChanged(live, out, tc.lastWritten); got != tc.want {
				t.Errorf("applyChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
