// Package katalog loads Katalog files: the one loader shared by validate, simulate, rbac gen
// and run. It decodes strictly, keeps every node's position, and reports structural problems
// as Findings instead of stopping at the first.
package katalog

import (
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Accepted apiVersions of a Katalog file.
const (
	APIVersion       = "orkestra.orkspace.io/v1"
	LegacyAPIVersion = "orkestra.konductor.io/v1Alpha"
	Kind             = "Katalog"
)

// Katalog is one Katalog file as written by the user.
type Katalog struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
}

// Metadata names the Katalog.
type Metadata struct {
	Name string `json:"name,omitempty"`
}

// Spec holds the CRDs, keyed by their name in this Katalog.
type Spec struct {
	CRDs map[string]*CRD `json:"crds"`
}

// CRD declares one custom resource type and how ork reconciles it.
type CRD struct {
	// APITypes identifies the resource; inferred from CRDFile when absent.
	APITypes *APITypes `json:"apiTypes,omitempty"`
	// Namespaced defaults to true (or the CRD manifest's scope).
	Namespaced *bool `json:"namespaced,omitempty"`
	// CRDFile is a CRD manifest, relative to the Katalog file.
	CRDFile string `json:"crdFile,omitempty"`
	// CRFiles are sample custom resources, relative to the Katalog file.
	CRFiles []string `json:"crFiles,omitempty"`
	// Status false accepts a crdFile without the status subresource, whose custom resources
	// ork run writes no status to; default true.
	Status      *bool       `json:"status,omitempty"`
	OperatorBox OperatorBox `json:"operatorBox"`

	// Name is the map key under spec.crds.
	Name string `json:"-"`
	// Source is the file the CRD was declared in.
	Source *File `json:"-"`
	// Manifest is the parsed CRDFile, nil when there is none or it did not parse.
	Manifest *apiextensionsv1.CustomResourceDefinition `json:"-"`
}

// APITypes is the group/version/kind/plural of a custom resource.
type APITypes struct {
	Group   string `json:"group,omitempty"`
	Version string `json:"version,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Plural  string `json:"plural,omitempty"`
}

// OperatorBox is the operator behaviour of a CRD.
type OperatorBox struct {
	Reconcile   Reconcile         `json:"reconcile,omitempty"`
	OnCreate    DeclaredResources `json:"onCreate,omitempty"`
	OnReconcile DeclaredResources `json:"onReconcile,omitempty"`
	OnDelete    DeclaredResources `json:"onDelete,omitempty"`
}

// DeclaredResources maps a block name (deployments, services, configMaps, ...) to intent
// field maps whose string values may be templates.
type DeclaredResources map[string][]map[string]any

// Reconcile selects and tunes the reconciler.
type Reconcile struct {
	// Default enables the built-in declarative reconciler; absent means true.
	Default *bool `json:"default,omitempty"`
	// Workers is the number of concurrent reconciles, 1..64; default 4.
	Workers *int `json:"workers,omitempty"`
	// Resync is the periodic re-reconcile interval (Go duration); empty means none.
	Resync string `json:"resync,omitempty"`
	// ForceConflict is the SSA force default for resources; absent means true.
	ForceConflict *bool `json:"forceConflict,omitempty"`
	// Target is where the declarative reconciler's children go (target.go); a remote CRD
	// sets remote.target instead. Default: the local cluster.
	Target *Target `json:"target,omitempty"`
	Remote *Remote `json:"remote,omitempty"`
}

// Remote wires an HTTP endpoint as the reconciler (the seed's wire format).
type Remote struct {
	// Endpoint is an absolute http(s) URL, or a template rendering to one.
	Endpoint string `json:"endpoint,omitempty"`
	// Protocol is "http" (the only one supported); default http.
	Protocol string `json:"protocol,omitempty"`
	// Timeout bounds the whole call (Go duration); default 30s.
	Timeout string `json:"timeout,omitempty"`
	// Args are rendered against the CR and coerced to JSON types.
	Args             map[string]any    `json:"args,omitempty"`
	Payload          Payload           `json:"payload,omitempty"`
	ManagedResources []ManagedResource `json:"managedResources,omitempty"`
	Auth             *Auth             `json:"auth,omitempty"`
	TLS              *TLS              `json:"tls,omitempty"`
	// Prune deletes the children this CR controls that a successful result no longer
	// returns; default false.
	Prune bool `json:"prune,omitempty"`
	// Finalize puts ork's finalizer on every CR so that its delete reaches the reconciler
	// at least once; default false.
	Finalize bool `json:"finalize,omitempty"`
	// FinalizeTimeout bounds, from the CR's deletionTimestamp, how long the finalizer waits
	// for an ok (Go duration); default DefaultFinalizeTimeout.
	FinalizeTimeout string `json:"finalizeTimeout,omitempty"`
	// Candidate is a new reconciler rolled out next to this one (candidate.go).
	Candidate *Candidate `json:"candidate,omitempty"`
	// Target is where the reconciler's children go (target.go); default the local cluster.
	Target *Target `json:"target,omitempty"`
	// SkipUnchanged lets the first pass of a CR after a restart, a leader change or a
	// bucket take skip the call when nothing it depends on changed since its last decision;
	// off when nil.
	SkipUnchanged *SkipUnchanged `json:"skipUnchanged,omitempty"`
}

// SkipUnchanged is reconcile.remote.skipUnchanged (docs/remote-reconciler.md#failover-without-re-asking).
type SkipUnchanged struct {
	// MaxAge is how old a decision may be and still be trusted without a call (Go duration,
	// positive); required.
	MaxAge string `json:"maxAge,omitempty"`
}

// MaxAgeOrZero is MaxAge parsed; zero (no skip) when it is not a positive duration (validate
// reports that) or s is nil.
func (s *SkipUnchanged) MaxAgeOrZero() time.Duration {
	if s == nil {
		return 0
	}
	if d, err := time.ParseDuration(s.MaxAge); err == nil && d > 0 {
		return d
	}
	return 0
}

// DefaultFinalizeTimeout is reconcile.remote.finalizeTimeout's default.
const DefaultFinalizeTimeout = 10 * time.Minute

// FinalizeTimeoutOrDefault is FinalizeTimeout parsed, DefaultFinalizeTimeout when empty or
// not a positive duration (validate reports that).
func (r *Remote) FinalizeTimeoutOrDefault() time.Duration {
	if d, err := time.ParseDuration(r.FinalizeTimeout); err == nil && d > 0 {
		return d
	}
	return DefaultFinalizeTimeout
}

// Payload shapes what is sent to the endpoint.
type Payload struct {
	Object   ObjectPayload   `json:"object,omitempty"`
	Children ChildrenPayload `json:"children,omitempty"`
	// LastApply sends the outcome of applying the previous result as prepared.lastApply;
	// default false.
	LastApply bool `json:"lastApply,omitempty"`
	// Related are the objects besides the CR the reconciler reads, sent as prepared.related;
	// default none.
	Related []Related `json:"related,omitempty"`
}

// Related is one entry of payload.related: objects of one type, found by name or by label
// selector, sent under prepared.related.<as>. Name, Namespace and the selector's values are
// templates over the CR.
type Related struct {
	// As is the key under prepared.related; required, unique in the list.
	As    string `json:"as"`
	Group string `json:"group,omitempty"`
	// Version defaults to the preferred version.
	Version string `json:"version,omitempty"`
	// Kind or Plural names the type: exactly one of them.
	Kind   string `json:"kind,omitempty"`
	Plural string `json:"plural,omitempty"`
	// Namespace defaults to the CR's for a namespaced kind; another one needs
	// AllowCrossNamespace. A cluster-scoped kind takes none.
	Namespace string `json:"namespace,omitempty"`
	// Name or Selector finds the objects: exactly one of them.
	Name     string           `json:"name,omitempty"`
	Selector *RelatedSelector `json:"selector,omitempty"`
	// Required: without the object (for a selector: any object) ork does not call; default false.
	Required bool `json:"required,omitempty"`
	// Exclude lists dot-paths removed from each object before it is sent.
	Exclude []string `json:"exclude,omitempty"`
	// AllowSecrets lets a Secret's data reach the endpoint; default false.
	AllowSecrets bool `json:"allowSecrets,omitempty"`
	// AllowCrossNamespace lets Namespace differ from the CR's; default false.
	AllowCrossNamespace bool `json:"allowCrossNamespace,omitempty"`
	// WatchStatus passes the CR again when only the object's status changed; default false.
	WatchStatus bool `json:"watchStatus,omitempty"`
}

// RelatedSelector is a label selector whose values are templates.
type RelatedSelector struct {
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}

// ObjectPayload lists dot-paths removed from the CR before it is sent.
type ObjectPayload struct {
	Exclude []string `json:"exclude,omitempty"`
}

// ChildrenPayload controls sending owned children in prepared.children.
type ChildrenPayload struct {
	// Enabled defaults to false.
	Enabled bool     `json:"enabled,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// ManagedResource is a resource type the reconciler may return.
type ManagedResource struct {
	Group string `json:"group"`
	// Version is optional; discovery picks the preferred version when empty.
	Version string `json:"version,omitempty"`
	Plural  string `json:"plural,omitempty"`
}

// Auth says where the endpoint's token comes from and which header carries it.
type Auth struct {
	SecretRef *SecretKeyRef `json:"secretRef,omitempty"`
	// Header defaults to Authorization (value "Bearer <token>"); other headers get the raw token.
	Header string `json:"header,omitempty"`
}

// SecretKeyRef points at one key of a Secret; Name and Namespace may be templates.
type SecretKeyRef struct {
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Key       string `json:"key,omitempty"`
}

// TLS configures verification of the endpoint's certificate.
type TLS struct {
	// CASecretRef's key defaults to DefaultCAKey.
	CASecretRef        *SecretKeyRef `json:"caSecretRef,omitempty"`
	CAFile             string        `json:"caFile,omitempty"`
	InsecureSkipVerify bool          `json:"insecureSkipVerify,omitempty"`
}

// IsRemote reports whether the CRD dispatches to a remote reconciler.
func (c *CRD) IsRemote() bool { return c.OperatorBox.Reconcile.Remote != nil }

// IsNamespaced reports the CRD's scope; namespaced unless declared otherwise.
func (c *CRD) IsNamespaced() bool { return c.Namespaced == nil || *c.Namespaced }

// DefaultEnabled reports whether the declarative reconciler is on (absent counts as true).
func (r Reconcile) DefaultEnabled() bool { return r.Default == nil || *r.Default }

// DefaultWorkers is the number of workers of a CRD without reconcile.workers: enough to keep
// the apiserver busy while the endpoint takes a few hundred milliseconds per call (each
// reconcile waits on the endpoint, then on two or three writes).
const DefaultWorkers = 32

// WorkerCount is the configured number of workers, DefaultWorkers when unset.
func (r Reconcile) WorkerCount() int {
	if r.Workers == nil {
		return DefaultWorkers
	}
	return *r.Workers
}

// DefaultCAKey is the key tls.caSecretRef reads when it names none: ca.crt, as cert-manager
// and kubernetes.io/tls Secrets carry the CA.
const DefaultCAKey = "ca.crt"
