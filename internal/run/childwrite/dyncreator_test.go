package childwrite

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// dynCreator creates through a (fake) dynamic client, for unit tests without an apiserver.
type dynCreator struct{ dyn dynamic.Interface }

func (d dynCreator) Create(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj *unstructured.Unstructured, opts metav1.CreateOptions) (metav1.Object, error) {
	out, err := d.dyn.Resource(gvr).Namespace(namespace).Create(ctx, obj, opts)
	if err != nil {
		return nil, err
	}
	return out, nil
}
