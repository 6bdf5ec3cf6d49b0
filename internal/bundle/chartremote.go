package bundle

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The values that replace a remote CRD's reconcile.remote for an install, each an `ork run`
// flag, never a templated Katalog (its own {{ }} would collide with Helm's): endpoints.<crd>
// (--endpoint), timeouts.<crd> (--endpoint-timeout) and authSecrets.<crd>
// (--auth-secret, with a Role granting get on that Secret).

// Holes of the auth-Secret Role and RoleBinding, one per authSecrets entry: the CRD's name,
// the Secret's namespace and name. A name and labels the chart never writes otherwise.
const (
	authCRDHole       = "orkhelmauthcrd4e8a1b"
	authNamespaceHole = "ork-helm-auth-namespace-6d2f0a"
	authSecretHole    = "ork-helm-auth-secret-8b3c9e"
)

// authSecretNamespace is an authSecrets entry's namespace ($s), ork's own by default, as
// a secretRef's without a namespace.
const authSecretNamespace = "($s.namespace | default $.Release.Namespace)"

// remoteArgs are the ork run arguments of the endpoints, timeouts and authSecrets values.
// Helm ranges over a map in key order: the arguments are stable.
func remoteArgs(indent, h string) string {
	switch h {
	case "ENDPOINTS":
		return indent + "{{- range $crd, $url := $.Values.endpoints }}\n" +
			indent + "{{- if $url }}\n" +
			indent + `- {{ printf "--endpoint=%s=%s" $crd $url | quote }}` + "\n" +
			indent + "{{- end }}\n" + indent + "{{- end }}"
	case "TIMEOUTS":
		return indent + "{{- range $crd, $d := $.Values.timeouts }}\n" +
			indent + "{{- if $d }}\n" +
			indent + `- {{ printf "--endpoint-timeout=%s=%s" $crd $d | quote }}` + "\n" +
			indent + "{{- end }}\n" + indent + "{{- end }}"
	case "AUTH_SECRETS":
		return indent + "{{- range $crd, $s := $.Values.authSecrets }}\n" +
			indent + `- {{ printf "--auth-secret=%s=%s/%s:%s" $crd ` + authSecretNamespace + ` $s.name $s.key | quote }}` + "\n" +
			indent + "{{- end }}"
	}
	return ""
}

// authSecretRBAC are the Role and RoleBinding templates that let ork's ServiceAccount get
// each Secret of the authSecrets value, by name, in its namespace: what rbacgen grants for
// an auth.secretRef of the Katalog. Each is named <fullname>-auth-<crd>, apart from the
// Role rbacgen may give that namespace.
func (c chartText) authSecretRBAC() ([]objectTemplate, error) {
	meta := func() map[string]any {
		return map[string]any{"name": nameHole + "-auth-" + authCRDHole, "namespace": authNamespaceHole}
	}
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(),
		"rules": []any{map[string]any{
			"apiGroups": []any{""}, "resources": []any{"secrets"}, "resourceNames": []any{authSecretHole}, "verbs": []any{"get"},
		}},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(),
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": nameHole + "-auth-" + authCRDHole},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": nameHole, "namespace": namespaceHole}},
	}}
	var out []objectTemplate
	for _, o := range []*unstructured.Unstructured{role, binding} {
		c.punch(o)
		text, err := c.templateText(o)
		if err != nil {
			return nil, err
		}
		text = strings.NewReplacer(authCRDHole, "{{ $crd }}", authNamespaceHole, "{{ "+authSecretNamespace+" }}",
			authSecretHole, "{{ $s.name | quote }}").Replace(text)
		out = append(out, objectTemplate{kind: o.GetKind(),
			text: "{{- range $crd, $s := $.Values.authSecrets }}\n---\n" + text + "{{- end }}\n"})
	}
	return out, nil
}

// remoteValuesSchema adds the schemas of endpoints, timeouts and authSecrets to props: each
// allows the Katalog's remote CRDs only.
func (b *Bundle) remoteValuesSchema(props map[string]any) {
	endpoints, timeouts, secrets := map[string]any{}, map[string]any{}, map[string]any{}
	for _, e := range b.remoteEndpoints() {
		endpoints[e.Name] = map[string]any{"type": "string", "pattern": "^(https?://.+)?$"}
		// A positive Go duration (time.ParseDuration, no sign, not zero), or "" for the Katalog's.
		timeouts[e.Name] = map[string]any{"type": "string",
			"pattern": `^((([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)?$`,
			"not":     map[string]any{"pattern": `^((0+(\.0*)?|\.0+)(ns|us|µs|μs|ms|s|m|h))+$`}}
		secrets[e.Name] = map[string]any{
			"type": "object", "additionalProperties": false, "required": []string{"name", "key"},
			"properties": map[string]any{
				"namespace": map[string]any{"type": "string", "pattern": "^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$", "maxLength": 63},
				"name": map[string]any{"type": "string", "maxLength": 253,
					"pattern": `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`},
				"key": map[string]any{"type": "string", "pattern": `^[-._a-zA-Z0-9]+$`, "maxLength": 253},
			},
		}
	}
	for key, p := range map[string]map[string]any{"endpoints": endpoints, "timeouts": timeouts, "authSecrets": secrets} {
		props[key] = map[string]any{"type": "object", "additionalProperties": false, "properties": p}
	}
}
