package validate

import (
	"fmt"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
)

// targets checks reconcile.target and reconcile.remote.target: the one of the CRD's
// reconciler (the other is an error, since ork would put the children elsewhere than it
// says), a complete kubeconfigSecretRef, and a warning for a templated Secret name.
func (k *checker) targets() {
	r := k.crd.OperatorBox.Reconcile
	if r.Target != nil && r.Remote != nil {
		k.errorAt(katalog.RuleTarget, "operatorBox.reconcile.target", "reconcile.target is the declarative reconciler's, and reconcile.remote ignores it",
			"move it under reconcile.remote as remote.target")
	}
	k.target("operatorBox.reconcile.target", r.Target)
	if r.Remote != nil {
		k.target(remotePath+".target", r.Remote.Target)
	}
}

// target checks one target at `at`.
func (k *checker) target(at string, t *katalog.Target) {
	if t == nil {
		return
	}
	ref := t.KubeconfigSecretRef
	if ref == nil {
		k.errorAt(katalog.RuleTarget, at, "target has no kubeconfigSecretRef",
			"set kubeconfigSecretRef: {name: ..., key: kubeconfig} to the Secret holding the other cluster's kubeconfig, or remove target for this cluster")
		return
	}
	at += ".kubeconfigSecretRef"
	k.secretRef(at, ref, "")
	if !render.IsTemplate(ref.Name) {
		return
	}
	ns := "ork's namespace"
	switch {
	case render.IsTemplate(ref.Namespace):
		ns = "every namespace"
	case ref.Namespace != "":
		ns = fmt.Sprintf("namespace %s", ref.Namespace)
	}
	// The Secret name decides which cluster the children go to, and whoever writes the custom
	// resource writes the name.
	k.warnAt(katalog.RuleTargetSecretTemplate, at+".name",
		fmt.Sprintf("kubeconfigSecretRef.name is a template: each custom resource picks its cluster among the kubeconfig Secrets of %s, and ork needs `get` on every Secret there (ork rbac gen grants it)", ns),
		"keep there only the kubeconfigs of clusters every author of these custom resources may use (a CRD validation rule can restrict the field the name is made of), or use a fixed name")
}
