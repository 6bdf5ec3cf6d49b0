package bundle

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The ork container's requests and limits: the one place they are set (the chart's values
// default to them too). Sized from the benchmark (docs/benchmarks.md, make bench): ork's RSS
// at rest is about 46 MiB with nothing cached, plus about 5–8 KiB per cached object (each
// custom resource and each of its children): 85 MiB at 2,000 CRs with 4,000 children, 186
// MiB at 10,000 with 20,000. Converging 1,000 CRs as fast as a 2-core apiserver takes them
// used about a fifth of a core. The request covers a couple of thousand CRs; the limit leaves
// room for about 10,000 and a burst. Raise both for more.
//
// There is no CPU limit, on purpose: a CPU limit throttles the container in every CFS
// period it exceeds, and a throttled leader can freeze past its renew deadline and lose
// its Lease mid-reconcile (ork then stops and restarts as a candidate). The CPU request
// still reserves a share and weighs ork against its neighbours under contention.
// Memory gets a limit: ork's caches hold every watched object, and a leak or an
// unexpectedly large cluster should restart ork, not starve the node.
const (
	RequestCPU    = "200m"
	RequestMemory = "128Mi"
	LimitMemory   = "512Mi"
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
