package bundle

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The ork container's requests and limits: the one place they are set (the chart's values
// default to them too). Sized to be revisited from the reconcile benchmark (make bench).
//
// There is no CPU limit, on purpose: a CPU limit throttles the container in every CFS
// period it exceeds, and a throttled leader can freeze past its renew deadline and lose
// its Lease mid-reconcile (ork then stops and restarts as a candidate). The CPU request
// still reserves a share and weighs ork against its neighbours under contention.
// Memory gets a limit: ork's caches hold every watched object, and a leak or an
// unexpectedly large cluster should restart ork, not starve the node.
const (
	RequestCPU    = "100m"
	RequestMemory = "64Mi"
	LimitMemory   = "256Mi"
)

// Resources are the container's requests and limits.
func Resources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(RequestCPU),
			corev1.ResourceMemory: resource.MustParse(RequestMemory),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceMemory: resource.MustParse(LimitMemory),
		},
	}
}
