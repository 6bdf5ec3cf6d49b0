package shard

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// The member Lease names its pod as its owner, so that the garbage collector deletes it
// with the pod; a Lease taken over from a predecessor of the same name drops the
// predecessor's pod (whose deletion would delete the live Lease), with or without a uid
// of its own.
func TestMemberLeaseIsOwnedByItsPod(t *testing.T) {
	old := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "old-pod", BlockOwnerDeletion: ptr.To(false)}
	tests := []struct {
		name        string
		uid         types.UID
		predecessor bool
		want        []metav1.OwnerReference
	}{
		{"new Lease", "pod-uid", false, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "pod-uid", BlockOwnerDeletion: ptr.To(false)}}},
		{"taken over", "pod-uid", true, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "pod-uid", BlockOwnerDeletion: ptr.To(false)}}},
		{"no uid", "", false, nil},
		{"no uid, taken over", "", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewClientset()
			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			if tt.predecessor {
				// Released by the predecessor: free to take at once.
				prev := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "ork-member-p", Namespace: "ns",
					OwnerReferences: []metav1.OwnerReference{old}}}
				created, err := cs.CoordinationV1().Leases("ns").Create(t.Context(), prev, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				_ = store.Add(created)
			}
			m, err := New(Options{Client: cs.CoordinationV1(), Namespace: "ns", Name: "ork", Member: "p", MemberUID: tt.uid,
				Buckets: 2, Clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))})
			if err != nil {
				t.Fatal(err)
			}
			r := &runState{buckets: map[int]*bucketLease{}}
			if err := m.holdMember(context.Background(), r, store); err != nil || r.member == nil {
				t.Fatalf("member Lease not taken: %v", err)
			}
			got, err := cs.CoordinationV1().Leases("ns").Get(t.Context(), "ork-member-p", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got.OwnerReferences, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("ownerReferences (-want +got):\n%s", d)
			}
		})
	}
}
