package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
)

// Ports of the ork container: `ork run`'s default --metrics-addr and --health-addr, which
// the bundle leaves to their defaults.
const (
	MetricsPort = 8080
	HealthPort  = 8081
)

// Names inside the pod.
const (
	ContainerName = "ork"
	// LeaderElectionPriorityLevel is the apiserver's own priority level for leader election
	// (one of its default PriorityLevelConfigurations).
	LeaderElectionPriorityLevel = "leader-election"
	// runAsID is the user and group of the container: distroless's nonroot.
	runAsID = 65532
	// graceMargin is the termination grace beyond --shutdown-timeout: releasing the Lease
	// and closing the health and metrics servers (bounded at 5s) follow the drain.
	graceMargin = 15
)

// labels of every object, as rbacgen sets them: managed-by is the value ork's children
// carry (docs/naming.md#the-install-ork-bundle-ork-bundle---helm-ork-rbac-gen).
func labels(o Options) map[string]string {
	return map[string]string{naming.NameLabel: o.Name, naming.ManagedByLabel: naming.ManagedBy}
}

// selector picks the pods of this install.
func selector(o Options) map[string]string {
	return map[string]string{naming.NameLabel: o.Name}
}

func meta(o Options, name string, namespaced bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Labels: labels(o)}
	if namespaced {
		m.Namespace = o.Namespace
	}
	return m
}

// namespace is ork's namespace, which several operators' bundles may share (the default
// orkestra-system): it carries no operator's name, so that every bundle declares it alike
// and applying one never changes it for another.
func namespace(o Options) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Namespace,
			Labels: map[string]string{naming.ManagedByLabel: naming.ManagedBy}},
	}
}

// crdObjects are the manifests of the Katalog's crdFile entries, read as the files have them.
func crdObjects(set *katalog.Set) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, c := range set.CRDs {
		if c.CRDFile == "" {
			continue
		}
		p := c.Source.Resolve(c.CRDFile)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("crds.%s crdFile: %w", c.Name, err)
		}
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("crds.%s crdFile %s: %w", c.Name, p, err)
		}
		if seen[u.GetName()] {
			continue
		}
		seen[u.GetName()] = true
		clean(u)
		out = append(out, u)
	}
	return out, nil
}

func configMap(o Options, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(o, o.Name, true),
		Data:       data,
	}
}

// Logging of the ork container, spelt out so the chart's logLevel and logFormat values
// have a default to show; ork's own defaults.
const (
	DefaultLogLevel  = "info"
	DefaultLogFormat = "text"
)

// Args are the ork container's arguments (its image's entrypoint is ork): the mounted
// Katalogs, the operator's name (the operator label on children and the Lease's name),
// leader election, the shutdown timeout the grace period is derived from, and logging.
// Engine tuning (QPS, workers) is left to ork's defaults and the Katalog.
func Args(o Options, katalogKeys []string) []string {
	args := []string{"run"}
	for _, k := range katalogKeys {
		args = append(args, "-f", path.Join(MountPath, k))
	}
	args = append(args, "--name="+o.Name, replicaMode(o), "--shutdown-timeout="+o.ShutdownTimeout.String(),
		"--log-level="+DefaultLogLevel, "--log-format="+DefaultLogFormat)
	for _, ns := range o.WatchNamespaces {
		args = append(args, "--watch-namespace="+ns)
	}
	return args
}

// replicaMode is how the replicas share the work: one leader, the others standing by, or
// every replica its share of the buckets.
func replicaMode(o Options) string {
	if o.ShardBuckets > 0 {
		return fmt.Sprintf("--shard-buckets=%d", o.ShardBuckets)
	}
	return "--leader-elect"
}

func deployment(o Options, files podFiles) *appsv1.Deployment {
	grace := int64(math.Ceil(o.ShutdownTimeout.Seconds())) + graceMargin
	probe := func(p string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: p, Port: intstr.FromString("health"),
		}}}
	}
	pod := corev1.PodSpec{
		ServiceAccountName:            o.Name,
		TerminationGracePeriodSeconds: &grace,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			RunAsUser:      ptr.To[int64](runAsID),
			RunAsGroup:     ptr.To[int64](runAsID),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		// Soft: a one-node cluster still runs every replica; the standby is only worth
		// something on another node.
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       corev1.LabelHostname,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: selector(o)},
			MatchLabelKeys:    []string{appsv1.DefaultDeploymentUniqueLabelKey},
		}},
		Containers: []corev1.Container{{
			Name:            ContainerName,
			Image:           o.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Args:            Args(o, files.katalogs),
			Env:             downwardEnv(),
			Ports: []corev1.ContainerPort{
				{Name: "metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP},
				{Name: "health", ContainerPort: HealthPort, Protocol: corev1.ProtocolTCP},
			},
			LivenessProbe:  probe("/healthz"),
			ReadinessProbe: probe("/readyz"),
			Resources:      Resources(),
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				ReadOnlyRootFilesystem:   ptr.To(true),
				RunAsNonRoot:             ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: MountPath, ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: o.Name}},
		}}},
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(o, o.Name, true),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(o.Replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: selector(o)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      labels(o),
					Annotations: map[string]string{naming.ConfigHashAnnotation: configHash(files.data)},
				},
				Spec: pod,
			},
		},
	}
}

// configHash digests the ConfigMap's data, keys in order.
func configHash(data map[string]string) string {
	h := sha256.New()
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(data[k]), data[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// service exposes every replica's /metrics for scraping.
func service(o Options) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(o, naming.MetricsServiceName(o.Name), true),
		Spec: corev1.ServiceSpec{
			Selector: selector(o),
			Ports: []corev1.ServicePort{{
				Name: "metrics", Port: MetricsPort, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

func podDisruptionBudget(o Options) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta(o, o.Name, true),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: selector(o)},
		},
	}
}

// flowSchemaPrecedence puts the schema before the defaults that would otherwise take ork's
// Lease requests: service-accounts (9000) and kube-system-service-accounts (900).
const flowSchemaPrecedence = 500

// flowSchema sends the ServiceAccount's Lease requests in its namespace to the apiserver's
// leader-election priority level, so renewals never queue behind ork's reconcile traffic.
func flowSchema(o Options) *flowcontrolv1.FlowSchema {
	return &flowcontrolv1.FlowSchema{
		TypeMeta:   metav1.TypeMeta{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "FlowSchema"},
		ObjectMeta: meta(o, naming.LeaderElectionFlowSchemaName(o.Name), false),
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: LeaderElectionPriorityLevel},
			MatchingPrecedence:         flowSchemaPrecedence,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{
					Kind:           flowcontrolv1.SubjectKindServiceAccount,
					ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: o.Name, Namespace: o.Namespace},
				}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs:      []string{flowcontrolv1.VerbAll},
					APIGroups:  []string{"coordination.k8s.io"},
					Resources:  []string{"leases"},
					Namespaces: []string{o.Namespace},
				}},
			}},
		},
	}
}

// toUnstructured converts a typed object to the map the output and the chart work on,
// without the fields a manifest does not carry (status, a zero creationTimestamp).
func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: m}
	clean(u)
	return u, nil
}

func clean(u *unstructured.Unstructured) {
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	// Empty structs the converter writes out (a Namespace's spec, a Deployment's strategy).
	for _, p := range [][]string{{"spec", "strategy"}, {"spec"}} {
		if m, ok, _ := unstructured.NestedMap(u.Object, p...); ok && len(m) == 0 {
			unstructured.RemoveNestedField(u.Object, p...)
		}
	}
}

// downwardEnv is the pod's identity from the downward API: its namespace (ork's own), and
// its name and uid, which name a sharded replica's member Lease and make the pod its owner
// (the garbage collector deletes the Lease with the pod).
func downwardEnv() []corev1.EnvVar {
	field := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	return []corev1.EnvVar{field("POD_NAMESPACE", "metadata.namespace"), field("POD_NAME", "metadata.name"), field("POD_UID", "metadata.uid")}
}
