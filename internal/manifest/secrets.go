package manifest

import (
	"context"
	"encoding/base64"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Secrets stand in for a cluster's Secrets where there is none: the Secret manifests among
// some objects. It has the method of remote.SecretSource.
type Secrets struct {
	objs []*unstructured.Unstructured
	// where says where the Secrets came from, for the error when one is missing.
	where string
}

// NewSecrets keeps the v1 Secrets among objs. where names their origin in messages ("the
// CR file or --secrets").
func NewSecrets(where string, objs ...*unstructured.Unstructured) Secrets {
	s := Secrets{where: where}
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetAPIVersion() == "v1" {
			s.objs = append(s.objs, o)
		}
	}
	return s
}

// SecretValue returns data[key] (base64-decoded) or stringData[key] of the Secret
// namespace/name. A manifest without a namespace matches any namespace.
func (s Secrets) SecretValue(_ context.Context, namespace, name, key string) ([]byte, error) {
	for _, o := range s.objs {
		if o.GetName() != name || (o.GetNamespace() != "" && o.GetNamespace() != namespace) {
			continue
		}
		if v, ok, _ := unstructured.NestedString(o.Object, "stringData", key); ok {
			return []byte(v), nil
		}
		if v, ok, _ := unstructured.NestedString(o.Object, "data", key); ok {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("secret %s/%s: data.%s is not base64: %w", namespace, name, key, err)
			}
			return b, nil
		}
		return nil, &MissingSecretError{Namespace: namespace, Name: name, Key: key, KeyOnly: true}
	}
	return nil, &MissingSecretError{Namespace: namespace, Name: name, Key: key, Where: s.where}
}

// MissingSecretError is a Secret, or a key of one, that the files do not hold.
type MissingSecretError struct {
	Namespace, Name, Key string
	// KeyOnly is true when the Secret is there without the key.
	KeyOnly bool
	// Where says where the Secrets came from ("the CR file or --secrets").
	Where string
}

func (e *MissingSecretError) Error() string {
	if e.KeyOnly {
		return fmt.Sprintf("secret %s/%s has no key %q", e.Namespace, e.Name, e.Key)
	}
	return fmt.Sprintf("no Secret %s/%s in %s", e.Namespace, e.Name, e.Where)
}
