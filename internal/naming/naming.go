package naming

// Prefix starts every label, annotation and finalizer ork invents.
const Prefix = "orkestra.orkspace.io/"

// On children: the objects ork applies for a custom resource.
const (
	// ManagedByLabel with value ManagedBy is on every child and every install object; prune
	// deletes only children that carry it.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "orkestra"
	// OperatorLabel names the operator (ork run --name) that wrote a child: each operator's
	// child caches select on it, so two operators in one cluster never cache each other's
	// children.
	OperatorLabel = Prefix + "operator"
	// NameLabel carries a workload's name on its pods and in its selector, and the
	// operator's name on its install objects.
	NameLabel = "app.kubernetes.io/name"
	// InstanceLabel carries the owning custom resource's name on an intent-form workload's
	// pods and selector.
	InstanceLabel = "app.kubernetes.io/instance"
	// FieldManager is the server-side apply field manager of everything ork writes.
	FieldManager = "orkestra"
	// AppliedAnnotation carries, on every child ork writes, the digest of the object it wrote
	// (without this annotation): after a restart, an object that carries the digest of what
	// ork would write, and that nobody else wrote since, needs no apply.
	AppliedAnnotation = Prefix + "applied"
	// OwnerAnnotation marks a child ork wrote for a custom resource that cannot own it by an
	// ownerReference (in another namespace than a namespaced CR): its value is the CR's uid.
	OwnerAnnotation = Prefix + "owner"
	// PruneAnnotation set to "false" on a child (by a user) keeps prune from deleting it.
	PruneAnnotation = Prefix + "prune"
	// DecisionAnnotation carries, on every child ork writes, the id of the decision (the
	// reconcile pass) that wrote it; it is left out of the AppliedAnnotation digest, so that
	// a new id alone never causes a write.
	DecisionAnnotation = Prefix + "decision"
	// TargetAnnotation tags each object of prepared.children whose custom resource has a
	// target with that target's name (its kubeconfig Secret's): sent to the reconciler, never
	// written by ork.
	TargetAnnotation = Prefix + "target"
	// SlotLabel is the child label whose value is SlotOf the owner, written with every apply
	// under ork run --shard-buckets.
	SlotLabel = Prefix + "shard"
)

// On custom resources.
const (
	// Finalizer is ork's finalizer (reconcile.remote.finalize).
	Finalizer = Prefix + "remote"
	// TargetCleanupFinalizer holds a custom resource whose children are in another cluster
	// (a target) until they are deleted there: no ownerReference crosses clusters, so no
	// garbage collector would.
	TargetCleanupFinalizer = Prefix + "target-cleanup"
	// SuspendAnnotation with value SuspendValue, set by a user, stops the reconciling of a
	// custom resource until removed.
	SuspendAnnotation = Prefix + "reconcile"
	SuspendValue      = "suspended"
	// PinAnnotation, set by a user to stable or candidate, pins a custom resource to one side
	// during a rollout.
	PinAnnotation = Prefix + "reconciler"
	// OperationAnnotation is the one annotation ork writes on a custom resource: the
	// long-running operation a remote reconciler answered "pending" for, as compact JSON,
	// when the CRD's status schema would prune status.operation.
	OperationAnnotation = Prefix + "operation"
)

// On install objects (ork bundle, ork bundle --helm).
const (
	// ConfigHashAnnotation on the Deployment's pod template is the digest of the in-pod
	// Katalogs, so that applying a changed Katalog rolls the pods.
	ConfigHashAnnotation = Prefix + "config-sha256"
	// GeneratedAnnotation marks a chart ork generated, so that ork bundle --helm may replace
	// it; LegacyGeneratedAnnotation marked the charts of earlier versions.
	GeneratedAnnotation       = Prefix + "generated-by"
	LegacyGeneratedAnnotation = "ork.orkspace.io/generated-by"
	// CommandAnnotation on a chart is the ork bundle command that regenerates it.
	CommandAnnotation = Prefix + "command"
)

// DefaultOperator is the operator's name when neither --name nor the Katalog gives one.
const DefaultOperator = "orkestra"

// RolloutConfigMapName is the rollout state's ConfigMap of the operator name, in ork's
// namespace: one per operator, one data key per CRD that has a candidate.
func RolloutConfigMapName(name string) string { return name + "-rollout" }

// TargetRoleName is the ClusterRole and ClusterRoleBinding of the operator name that a
// target cluster grants (ork rbac gen --target): apart from the hub's own, so that a cluster
// that is both keeps both.
func TargetRoleName(name string) string { return name + "-target" }

// MetricsServiceName is the install's metrics Service of the operator name.
func MetricsServiceName(name string) string { return name + "-metrics" }

// LeaderElectionFlowSchemaName is the install's FlowSchema of the operator name, which puts
// its Lease requests in the apiserver's leader-election priority level.
func LeaderElectionFlowSchemaName(name string) string { return name + "-leader-election" }
