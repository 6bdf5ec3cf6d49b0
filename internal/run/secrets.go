package run

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// secretGetter reads Secret keys with a direct GET on every call: a rotated token is used
// on the next request, and RBAC can stay scoped to resourceNames (no list/watch needed).
type secretGetter struct{ kube kubernetes.Interface }

func (s secretGetter) SecretValue(ctx context.Context, namespace, name, key string) ([]byte, error) {
	sec, err := s.kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get secret %s/%s: %w", namespace, name, err)
	}
	v, ok := sec.Data[key]
	if !ok {
		return nil, fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
	}
	return v, nil
}
