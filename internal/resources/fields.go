package resources

// Fields lists the fields an intent type accepts, required first, as
// docs/remote-reconciler.md#the-intent-form does. Every type
// also accepts namespace, labels and annotations (listed in optional). Unknown types have
// none.
func (t TypeInfo) Fields() (required, optional []string) {
	meta := []string{"namespace", "labels", "annotations"}
	pod := []string{"port", "command", "args", "env", "resources"}
	switch t.Type {
	case "deployment", "statefulset":
		return []string{"name", "image"}, append(append([]string{"replicas"}, pod...), meta...)
	case "daemonset":
		return []string{"name", "image"}, append(pod, meta...)
	case "service":
		return []string{"name", "port"}, append([]string{"targetPort", "type", "selector"}, meta...)
	case "configmap":
		return []string{"name", "data"}, meta
	case "secret":
		return []string{"name"}, append([]string{"data", "stringData", "type"}, meta...)
	case "serviceaccount":
		return []string{"name"}, meta
	case "job":
		return []string{"name", "image"}, append([]string{"command", "args", "backoffLimit"}, meta...)
	case "cronjob":
		return []string{"name", "image", "schedule"},
			append([]string{"command", "args", "backoffLimit", "suspend"}, meta...)
	case "ingress":
		return []string{"name", "serviceName", "servicePort"},
			append([]string{"host", "path", "pathType", "ingressClass"}, meta...)
	case "persistentvolumeclaim":
		return []string{"name", "storage"}, append([]string{"accessModes", "storageClass"}, meta...)
	case Custom:
		return []string{"apiVersion", "kind", "name"}, append([]string{"spec", "data"}, meta...)
	}
	return nil, nil
}
