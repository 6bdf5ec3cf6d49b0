package bundle

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
)

// notes is the chart's NOTES.txt: what to do after `helm install` before a custom resource
// converges. Text from the Katalog (a Secret's name may itself be a template) goes in as a
// template string literal, so Helm prints it and never evaluates it.
func (b *Bundle) notes() string {
	var s strings.Builder
	s.WriteString(`ork runs the operators of ` + lit(strings.Join(b.sources, ", ")) + ` in {{ .Release.Namespace }} as {{ include "` +
		b.opts.Name + `.serviceAccountName" . }}.
Check it: kubectl -n {{ .Release.Namespace }} rollout status deployment/{{ include "` + b.opts.Name + `.fullname" . }}
`)
	step := 1
	for _, c := range b.set.CRDs {
		r := c.OperatorBox.Reconcile.Remote
		if r == nil {
			continue
		}
		if r.Auth != nil && r.Auth.SecretRef != nil {
			ref := r.Auth.SecretRef
			ns := "{{ .Release.Namespace }}"
			if ref.Namespace != "" {
				ns = lit(ref.Namespace)
			}
			// authSecrets.<crd> replaces the Katalog's Secret for this install.
			fmt.Fprintf(&s, "\n%d. crds.%s: create the token its reconciler expects (the same value the reconciler reads):\n"+
				"{{- with index .Values.authSecrets %s }}\n"+
				"   kubectl -n {{ .namespace | default $.Release.Namespace }} create secret generic {{ .name }} --from-literal={{ .key }}=<token>\n"+
				"{{- else }}\n"+
				"   kubectl -n %s create secret generic %s --from-literal=%s=<token>\n"+
				"{{- end }}\n",
				step, lit(c.Name), strconv.Quote(c.Name), ns, lit(ref.Name), lit(ref.Key))
			if strings.Contains(ref.Name+ref.Namespace, "{{") {
				s.WriteString("   (the name is a template, rendered for each custom resource)\n")
			}
			step++
		}
		fmt.Fprintf(&s, "\n%d. crds.%s: deploy its reconciler, serving %s\n"+
			"   (ork init --remote writes deploy/reconciler.yaml for it).\n", step, lit(c.Name),
			fmt.Sprintf("{{ index .Values.endpoints %s | default %s }}", strconv.Quote(c.Name), strconv.Quote(r.Endpoint)))
		step++
	}
	s.WriteString("\n" + strconv.Itoa(step) + ". Apply a custom resource and wait until it is Ready:\n")
	for _, c := range b.set.CRDs {
		fmt.Fprintf(&s, "   kubectl wait --for=condition=Ready %s/<name>%s --timeout=2m\n", lit(resourceName(c)), nsFlag(c))
	}
	s.WriteString(`{{- if .Values.debugDecisions.enabled }}

WARNING: debugDecisions.enabled serves every object's last reconcile decisions at
/debug/decisions/ on port 8080 WITHOUT AUTHENTICATION. Read them with
  kubectl -n {{ .Release.Namespace }} port-forward deployment/{{ include "` + b.opts.Name + `.fullname" . }} 8080 & ork trace <namespace>/<name> --addr 127.0.0.1:8080
and turn it off again when done.
{{- end }}
`)
	return s.String()
}

// lit is s as a template string literal: printed as it is.
func lit(s string) string { return "{{ " + strconv.Quote(s) + " }}" }

// resourceName is the CRD's plural.group, as kubectl names its objects.
func resourceName(c *katalog.CRD) string {
	at := c.APITypes
	if at == nil {
		return c.Name
	}
	plural := at.Plural
	if plural == "" {
		plural = strings.ToLower(at.Kind) + "s"
	}
	if at.Group == "" {
		return plural
	}
	return plural + "." + at.Group
}

func nsFlag(c *katalog.CRD) string {
	if c.IsNamespaced() {
		return " -n <namespace>"
	}
	return ""
}
