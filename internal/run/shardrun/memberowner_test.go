package shardrun_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/testkit"
)

// A replica's member Lease names its pod ($POD_UID from the downward API) as its owner:
// once the pod is gone, the cluster's garbage collector deletes the Lease.
func TestMemberLeaseGoesWithItsPod(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	env.StartControllerManager(t)
	// No controller makes the namespace's default ServiceAccount here, which admission
	// may want for a pod.
	if _, err := env.Clientset.CoreV1().ServiceAccounts(f.ns).Create(t.Context(),
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// Never scheduled (no node): deleting it deletes it at once.
	pod, err := env.Clientset.CoreV1().Pods(f.ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "m0"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ork", Image: "ork"}},
			AutomountServiceAccountToken: ptr.To(false)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.env = []string{"POD_UID=" + string(pod.UID), "POD_NAMESPACE=" + f.ns}
	p := f.sharded(pod.Name, 2, "--endpoint", f.via(pod.Name))
	name := naming.MemberLeaseName("orkestra", pod.Name)
	testkit.Eventually(t, "the member Lease names its pod", 100*time.Millisecond, slack, func(ctx context.Context) (bool, error) {
		l, err := env.Clientset.CoordinationV1().Leases(f.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if refs := l.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].Name != pod.Name || refs[0].UID != pod.UID {
			return false, fmt.Errorf("member Lease ownerReferences %+v, want pod %s/%s", refs, pod.Name, pod.UID)
		}
		return true, nil
	})

	// Killed, so that nothing renews or releases it: only the collector can remove it.
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	if err := env.Clientset.CoreV1().Pods(f.ns).Delete(t.Context(), pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The collector first syncs its informers on every resource type: allow it a minute.
	testkit.Eventually(t, "the member Lease deleted with its pod", 100*time.Millisecond, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := env.Clientset.CoordinationV1().Leases(f.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
