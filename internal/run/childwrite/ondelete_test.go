package childwrite

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
)

func TestOnDeleteJudgesOwnershipBeforeDeleting(t *testing.T) {
	cr := &unstructured.Unstructured{}
	cr.SetUID("cr-uid")
	controller := func(uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "t/v1", Kind: "App", Name: "a", UID: uid, Controller: ptr.To(true)}}
	}
	for _, tc := range []struct {
		name string
		live metav1.ObjectMeta
		want removal
	}{
		{"controlled by the CR", metav1.ObjectMeta{OwnerReferences: controller("cr-uid")}, mine},
		{"controlled by another object", metav1.ObjectMeta{OwnerReferences: controller("other"), Labels: map[string]string{naming.ManagedByLabel: naming.ManagedBy}}, notMine},
		{"marked by the CR", metav1.ObjectMeta{Annotations: map[string]string{naming.OwnerAnnotation: "cr-uid"}}, mine},
		{"marked by another CR", metav1.ObjectMeta{Annotations: map[string]string{naming.OwnerAnnotation: "other"}, Labels: map[string]string{naming.ManagedByLabel: naming.ManagedBy}}, notMine},
		{"unmarked, ork's label (written before the mark)", metav1.ObjectMeta{Labels: map[string]string{naming.ManagedByLabel: naming.ManagedBy}}, legacy},
		{"someone else's", metav1.ObjectMeta{}, notMine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := judgeRemoval(cr, &tc.live); got != tc.want {
				t.Errorf("judgeRemoval = %v, want %v", got, tc.want)
			}
		})
	}
}
