package katalog

// Target is where a CRD's children go: without it (or with a Secret name that renders
// empty) the cluster ork runs in; with kubeconfigSecretRef, the cluster of the kubeconfig in
// that Secret (a spoke), whose name may be a template over the custom resource.
type Target struct {
	// KubeconfigSecretRef is the Secret key holding a kubeconfig; its Namespace defaults to
	// ork's namespace, its Key is required.
	KubeconfigSecretRef *SecretKeyRef `json:"kubeconfigSecretRef,omitempty"`
}

// Target is the target of the CRD's reconciler: reconcile.remote.target for a remote CRD,
// reconcile.target for a declarative one; nil means the local cluster.
func (c *CRD) Target() *Target {
	r := c.OperatorBox.Reconcile
	if r.Remote != nil {
		return r.Remote.Target
	}
	return r.Target
}
