package resources

import (
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/orkspace/ork/internal/naming"
)

// buildTyped checks r's fields against t and builds the typed object; nil when r.err is set.
func buildTyped(r *reader, t TypeInfo, opts Options) runtime.Object {
	r.check(t.Fields())
	if r.err != nil {
		return nil
	}
	var obj runtime.Object
	switch t.Type {
	case "deployment":
		obj = deployment(r, opts)
	case "statefulset":
		obj = statefulSet(r, opts)
	case "daemonset":
		obj = daemonSet(r, opts)
	case "job":
		obj = job(r, opts)
	case "cronjob":
		obj = cronJob(r, opts)
	case "service":
		obj = service(r, opts)
	case "configmap":
		obj = configMap(r, opts)
	case "secret":
		obj = secret(r, opts)
	case "serviceaccount":
		obj = &corev1.ServiceAccount{ObjectMeta: objectMeta(r, opts, nil)}
	case "ingress":
		obj = ingress(r, opts)
	case "persistentvolumeclaim":
		obj = persistentVolumeClaim(r, opts)
	}
	if r.err != nil || obj == nil {
		return nil
	}
	obj.GetObjectKind().SetGroupVersionKind(t.GVK)
	return obj
}

// objectMeta reads name, namespace, labels and annotations; base labels come first so the
// entry's own labels override them, and managed-by is always set.
func objectMeta(r *reader, opts Options, base map[string]string) metav1.ObjectMeta {
	ns := r.str("namespace")
	if ns == "" {
		ns = opts.Namespace
	}
	return metav1.ObjectMeta{
		Name:        r.str("name"),
		Namespace:   ns,
		Labels:      objectLabels(base, r.stringMap("labels")),
		Annotations: r.stringMap("annotations"),
	}
}

// workload is what every pod-running type shares: metadata, selector and pod template.
type workload struct {
	meta     metav1.ObjectMeta
	selector *metav1.LabelSelector
	template corev1.PodTemplateSpec
}

// readWorkload builds the shared parts. Pods carry naming.NameLabel=<name> and the selector labels;
// the entry's labels go on the object and its pods but never into the (immutable) selector.
func readWorkload(r *reader, opts Options) workload {
	name := r.str("name")
	sel := map[string]string{naming.NameLabel: name}
	maps.Copy(sel, opts.SelectorLabels)
	user := r.stringMap("labels")
	podLabels := maps.Clone(user)
	if podLabels == nil {
		podLabels = map[string]string{}
	}
	maps.Copy(podLabels, sel)
	return workload{
		meta:     objectMeta(r, opts, sel),
		selector: &metav1.LabelSelector{MatchLabels: sel},
		template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{container(r, name)}},
		},
	}
}

func container(r *reader, name string) corev1.Container {
	c := corev1.Container{
		Name:      containerName(name),
		Image:     r.str("image"),
		Command:   r.strings("command"),
		Args:      r.strings("args"),
		Resources: readResources(r, "resources"),
	}
	if p := r.int32("port"); p != nil {
		c.Ports = []corev1.ContainerPort{{ContainerPort: *p}}
	}
	env := r.stringMap("env")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: env[k]})
	}
	return c
}

// containerName makes a DNS label of an object name, which may contain dots.
func containerName(name string) string {
	n := strings.ReplaceAll(name, ".", "-")
	if len(n) > 63 {
		n = strings.TrimRight(n[:63], "-")
	}
	return n
}

// readResources reads {requests: {cpu, memory}, limits: {cpu, memory}}.
func readResources(r *reader, name string) corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	m := r.mapping(name)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		field := name + "." + k
		if k != "requests" && k != "limits" {
			r.unknown(field, k, []string{"limits", "requests"})
			return out
		}
		rm, ok := m[k].(map[string]any)
		if !ok {
			r.fail(field, "expected a mapping of cpu and memory, got %s", describe(m[k]))
			return out
		}
		list := corev1.ResourceList{}
		for _, rk := range slices.Sorted(maps.Keys(rm)) {
			if rk != "cpu" && rk != "memory" {
				r.unknown(field+"."+rk, rk, []string{"cpu", "memory"})
				return out
			}
			list[corev1.ResourceName(rk)] = r.quantity(field+"."+rk, rm[rk])
		}
		if k == "requests" {
			out.Requests = list
		} else {
			out.Limits = list
		}
	}
	return out
}

func deployment(r *reader, opts Options) runtime.Object {
	w := readWorkload(r, opts)
	return &appsv1.Deployment{ObjectMeta: w.meta, Spec: appsv1.DeploymentSpec{
		Replicas: replicas(r), Selector: w.selector, Template: w.template,
	}}
}

func statefulSet(r *reader, opts Options) runtime.Object {
	w := readWorkload(r, opts)
	return &appsv1.StatefulSet{ObjectMeta: w.meta, Spec: appsv1.StatefulSetSpec{
		Replicas: replicas(r), Selector: w.selector, Template: w.template,
	}}
}

func daemonSet(r *reader, opts Options) runtime.Object {
	w := readWorkload(r, opts)
	return &appsv1.DaemonSet{ObjectMeta: w.meta, Spec: appsv1.DaemonSetSpec{
		Selector: w.selector, Template: w.template,
	}}
}

// replicas is sent only when the entry gives it (docs/remote-reconciler.md#the-intent-form):
// absent, ork does not own the field, so a HorizontalPodAutoscaler (or kubectl scale) may; a
// new object gets the apiserver's default of 1.
func replicas(r *reader) *int32 { return r.int32("replicas") }

// jobSpec is a job's pod template; the Job controller generates its own selector.
func jobSpec(r *reader, opts Options) (metav1.ObjectMeta, batchv1.JobSpec) {
	w := readWorkload(r, opts)
	w.template.Spec.RestartPolicy = corev1.RestartPolicyNever
	return w.meta, batchv1.JobSpec{BackoffLimit: r.int32("backoffLimit"), Template: w.template}
}

func job(r *reader, opts Options) runtime.Object {
	meta, spec := jobSpec(r, opts)
	return &batchv1.Job{ObjectMeta: meta, Spec: spec}
}

func cronJob(r *reader, opts Options) runtime.Object {
	meta, spec := jobSpec(r, opts)
	return &batchv1.CronJob{ObjectMeta: meta, Spec: batchv1.CronJobSpec{
		Schedule:    r.str("schedule"),
		Suspend:     r.bool("suspend"),
		JobTemplate: batchv1.JobTemplateSpec{Spec: spec},
	}}
}
