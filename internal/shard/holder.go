package shard

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/orkspace/ork/internal/naming"
)

// HolderOf finds who holds the bucket of the CR uid, for `ork trace`: the holder identity
// (<pod>_<random>) of its bucket Lease, whatever B the running ring uses, and that Lease's
// name. It reads the Leases once and judges no expiry: a holder that stopped renewing is
// still named. An empty holder means the bucket is free; an error means no bucket Lease of
// name covers uid.
func HolderOf(ctx context.Context, leases coordinationv1client.LeasesGetter, namespace, name string, uid types.UID) (who, lease string, err error) {
	list, err := leases.Leases(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", "", fmt.Errorf("list Leases in %s: %w", namespace, err)
	}
	for i := range list.Items {
		l := &list.Items[i]
		bucket, b, ok := naming.ParseBucketLeaseName(name, l.Name)
		if !ok || BucketOf(uid, b) != bucket {
			continue
		}
		// During a change of B two rings' Leases exist; the one with a holder is the live one.
		if h := holder(l); h != "" || lease == "" {
			who, lease = h, l.Name
		}
	}
	if lease == "" {
		return "", "", fmt.Errorf("no bucket Lease of %s in %s covers uid %s", name, namespace, uid)
	}
	return who, lease, nil
}
