package cli

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orkspace/ork/internal/bundle"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/trace"
)

// holderLookup finds, for `ork trace --holder`, the replica of a sharded ork (ork run
// --shard-buckets) whose bucket holds the object, and reaches its decisions through the
// apiserver's pod proxy: no port-forward to guess which pod to open.
type holderLookup struct {
	files   []string
	cluster clusterOptions
	// name is the operator's (ork run --name: the bucket Leases are named after it) and
	// namespace ork's own (the Leases').
	name, namespace string
}

// heldBy is what the lookup found: the object's CRD in the Katalog, the bucket Lease
// covering its uid, the pod holding it, and a client for that pod's decisions.
type heldBy struct {
	crd, lease, pod string
	client          trace.Client
}

// find resolves k's CRD and uid from the cluster, the holder of its bucket from the Leases,
// and the pod's metrics port from addr.
func (h holderLookup) find(ctx context.Context, env *Env, k trace.Key, addr string) (heldBy, error) {
	set, err := loadValidKatalog(env, h.files)
	if err != nil {
		return heldBy{}, err
	}
	if h.name == "" {
		if h.name, err = bundle.DefaultName(set); err != nil {
			return heldBy{}, usageError("%v: pass --name (ork run --name of the sharded ork)", err)
		}
	}
	port, err := portOf(addr)
	if err != nil {
		return heldBy{}, err
	}
	rc, err := h.cluster.restConfig()
	if err != nil {
		return heldBy{}, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return heldBy{}, fmt.Errorf("dynamic client: %w", err)
	}
	crd, uid, err := objectOf(ctx, dyn, set, k)
	if err != nil {
		return heldBy{}, err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return heldBy{}, fmt.Errorf("client: %w", err)
	}
	who, lease, err := shard.HolderOf(ctx, kube.CoordinationV1(), h.namespace, h.name, uid)
	if err != nil {
		return heldBy{}, &ExitError{Code: ExitFailed, Err: fmt.Errorf("%w (is a sharded ork run --name %s running in %s?)", err, h.name, h.namespace)}
	}
	if who == "" {
		return heldBy{}, &ExitError{Code: ExitFailed, Err: fmt.Errorf("bucket Lease %s in %s has no holder: no replica reconciles %s now", lease, h.namespace, nsOrName(k))}
	}
	// The holder identity is <pod>_<random> (shard's Manager), the pod its member Lease names.
	pod := who
	if i := strings.LastIndexByte(who, '_'); i > 0 {
		pod = who[:i]
	}
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		return heldBy{}, fmt.Errorf("client: %w", err)
	}
	base := strings.TrimSuffix(rc.Host, "/") + "/api/v1/namespaces/" + url.PathEscape(h.namespace) +
		"/pods/" + url.PathEscape(pod+":"+port) + "/proxy"
	return heldBy{crd: crd, lease: lease, pod: pod, client: trace.Client{Base: base, HTTP: hc}}, nil
}

// objectOf finds the object k among the Katalog's CRDs (only k.CRD's when named) and
// returns its CRD and uid.
func objectOf(ctx context.Context, dyn dynamic.Interface, set *katalog.Set, k trace.Key) (string, types.UID, error) {
	var found []string
	var uid types.UID
	for _, crd := range set.CRDs {
		at := crd.APITypes
		if (k.CRD != "" && crd.Name != k.CRD) || at == nil || at.Plural == "" {
			continue
		}
		gvr := schema.GroupVersionResource{Group: at.Group, Version: at.Version, Resource: at.Plural}
		obj, err := dyn.Resource(gvr).Namespace(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", "", &ExitError{Code: ExitFailed, Err: fmt.Errorf("get %s %s: %w", gvr.GroupResource(), nsOrName(k), err)}
		}
		found, uid = append(found, crd.Name), obj.GetUID()
	}
	switch len(found) {
	case 0:
		return "", "", &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: no custom resource of that name in the cluster", nsOrName(k))}
	case 1:
		return found[0], uid, nil
	}
	return "", "", usageError("%s is an object of %d CRDs (%s): name the CRD", nsOrName(k), len(found), strings.Join(found, ", "))
}

// portOf is the port of --addr (host:port or a URL): the holder's metrics port, as every
// replica of one Deployment serves on the same.
func portOf(addr string) (string, error) {
	hostport := addr
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		hostport = u.Host
	}
	_, port, err := net.SplitHostPort(hostport)
	if err != nil || port == "" {
		return "", usageError("--addr %q: want host:port, whose port is the replicas' metrics port", addr)
	}
	return port, nil
}
