package resources

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orkspace/ork/internal/naming"
)

func service(r *reader, opts Options) runtime.Object {
	meta := objectMeta(r, opts, nil)
	port := r.int32("port")
	target := r.intOrString("targetPort")
	typ := r.oneOf("type", "ClusterIP", "NodePort", "LoadBalancer")
	selector := r.stringMap("selector")
	if r.err != nil {
		return nil
	}
	if selector == nil {
		selector = maps.Clone(opts.SelectorLabels)
	}
	if len(selector) == 0 {
		selector = map[string]string{naming.NameLabel: meta.Name}
	}
	sp := corev1.ServicePort{Port: *port, TargetPort: intstr.FromInt32(*port)}
	if target != nil {
		sp.TargetPort = *target
	}
	return &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{
		Type: corev1.ServiceType(typ), Selector: selector, Ports: []corev1.ServicePort{sp},
	}}
}

func configMap(r *reader, opts Options) runtime.Object {
	return &corev1.ConfigMap{ObjectMeta: objectMeta(r, opts, nil), Data: r.stringMap("data")}
}

// secret takes data base64-encoded, as Kubernetes does, and stringData as plain text.
func secret(r *reader, opts Options) runtime.Object {
	s := &corev1.Secret{
		ObjectMeta: objectMeta(r, opts, nil),
		StringData: r.stringMap("stringData"),
		Type:       corev1.SecretType(r.str("type")),
	}
	encoded := r.stringMap("data")
	if r.err == nil && encoded == nil && s.StringData == nil {
		r.fail("data", "required: set data (base64-encoded values) or stringData (plain text)")
	}
	for _, k := range slices.Sorted(maps.Keys(encoded)) {
		b, err := base64.StdEncoding.DecodeString(encoded[k])
		if err != nil {
			r.fail("data."+k, "not valid base64 (put plain text in stringData)")
			return nil
		}
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		s.Data[k] = b
	}
	return s
}

func ingress(r *reader, opts Options) runtime.Object {
	meta := objectMeta(r, opts, nil)
	port := r.intOrString("servicePort")
	path := r.str("path")
	if path == "" {
		path = "/"
	}
	pathType := networkingv1.PathType(r.oneOf("pathType", "Exact", "Prefix", "ImplementationSpecific"))
	if pathType == "" {
		pathType = networkingv1.PathTypePrefix
	}
	backend := networkingv1.IngressServiceBackend{Name: r.str("serviceName")}
	var class *string
	if c := r.str("ingressClass"); c != "" {
		class = &c
	}
	if r.err != nil {
		return nil
	}
	if port.Type == intstr.Int {
		backend.Port.Number = port.IntVal
	} else {
		backend.Port.Name = port.StrVal
	}
	return &networkingv1.Ingress{ObjectMeta: meta, Spec: networkingv1.IngressSpec{
		IngressClassName: class,
		Rules: []networkingv1.IngressRule{{
			Host: r.str("host"),
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{
					Path: path, PathType: &pathType,
					Backend: networkingv1.IngressBackend{Service: &backend},
				}},
			}},
		}},
	}}
}

func persistentVolumeClaim(r *reader, opts Options) runtime.Object {
	meta := objectMeta(r, opts, nil)
	storage, _ := r.get("storage")
	size := r.quantity("storage", storage)
	modes := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	if list := r.strings("accessModes"); list != nil {
		modes = modes[:0]
		known := []string{"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}
		for i, m := range list {
			if !slices.Contains(known, m) {
				r.fail(fmt.Sprintf("accessModes[%d]", i), "%q is not one of %s", m, strings.Join(known, ", "))
				return nil
			}
			modes = append(modes, corev1.PersistentVolumeAccessMode(m))
		}
	}
	var class *string
	if c := r.str("storageClass"); c != "" {
		class = &c
	}
	return &corev1.PersistentVolumeClaim{ObjectMeta: meta, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      modes,
		StorageClassName: class,
		Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: size},
		},
	}}
}
