// Package metacreate creates Kubernetes objects and takes the apiserver's answer as metadata
// only, which is all a controller needs of a create it made.
package metacreate

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// MetadataAccept asks the apiserver to answer with the object's metadata only, as the
// metadata client does for its patches (protobuf, or JSON where a type has none).
const MetadataAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// Creator creates objects and takes the answer as metadata only. The metadata client
// has no create, and the dynamic client's answer is the whole object: the apiserver encoding
// it and ork decoding it was the largest part of ork's CPU for a new child (a sixth, in
// the bench's profile), while ork needs only its uid and resourceVersion.
type Creator struct{ client rest.Interface }

// New returns a Creator over cfg.
func New(cfg *rest.Config) (*Creator, error) {
	c := metadata.ConfigFor(cfg)
	c.GroupVersion = &schema.GroupVersion{}
	c.APIPath = "/"
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("metadata create client: %w", err)
	}
	return &Creator{client: client}, nil
}

// Create POSTs obj to gvr in namespace ("" for cluster-scoped) and returns its metadata.
func (m *Creator) Create(ctx context.Context, gvr schema.GroupVersionResource, namespace string, obj *unstructured.Unstructured, opts metav1.CreateOptions) (metav1.Object, error) {
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode %s/%s: %w", gvr.Resource, obj.GetName(), err)
	}
	res := m.client.Post().AbsPath(collectionPath(gvr, namespace)...).Body(body).
		SetHeader("Content-Type", runtime.ContentTypeJSON).
		SetHeader("Accept", MetadataAccept).
		SpecificallyVersionedParams(&opts, metav1.ParameterCodec, metav1.SchemeGroupVersion).
		Do(ctx)
	if err := res.Error(); err != nil {
		return nil, err
	}
	out, err := res.Get()
	if err != nil {
		return nil, fmt.Errorf("decode the answer to the create of %s/%s: %w", gvr.Resource, obj.GetName(), err)
	}
	partial, ok := out.(*metav1.PartialObjectMetadata)
	if !ok {
		return nil, fmt.Errorf("the answer to the create of %s/%s is a %T, not metadata", gvr.Resource, obj.GetName(), out)
	}
	return partial, nil
}

// collectionPath is the URL path of gvr's objects in namespace.
func collectionPath(gvr schema.GroupVersionResource, namespace string) []string {
	path := []string{"apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		path = []string{"api", gvr.Version}
	}
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	return append(path, gvr.Resource)
}
