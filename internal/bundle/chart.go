package bundle

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"
)

// ChartVersion is the version of every generated chart: the chart is regenerated from the
// Katalog, not released on its own; appVersion carries the ork version.
const ChartVersion = "0.1.0"

// GeneratedAnnotation marks a chart ork generated, so that --helm may replace it.
const GeneratedAnnotation = "ork.orkspace.io/generated-by"

// Holes are written into the objects before they are encoded, then replaced with template
// actions. The namespace is a valid DNS label, so it can go through rbacgen's checks.
const (
	namespaceHole = "ork-helm-release-namespace-3c7e1f"
	holePrefix    = "__ORK_HOLE_"
)

// HelmLabels are the labels the chart adds to every object it templates (the bundle has
// app.kubernetes.io/managed-by: ork where the chart has Helm).
var HelmLabels = []string{"helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by"}

// holeLine is a YAML line whose value is a hole: indent, an optional "- " or "key: ", the hole.
var holeLine = regexp.MustCompile(`(?m)^( *)(- |[A-Za-z0-9./_-]+: )` + holePrefix + `([A-Z_]+)__$`)

// fill is the template text for a hole, given the line's indent and its "- " or "key: ".
func fill(indent, lead, hole string) string {
	deeper := fmt.Sprint(len(indent) + 2)
	switch hole {
	case "REPLICAS":
		return indent + lead + "{{ .Values.replicas }}"
	case "IMAGE":
		return indent + lead + "{{ .Values.image | quote }}"
	case "RESOURCES":
		return indent + lead[:len(lead)-1] + "\n" + indent + "  {{- toYaml .Values.resources | nindent " + deeper + " }}"
	case "EXTRA_ARGS":
		return indent + "{{- range .Values.extraArgs }}\n" + indent + "- {{ . | quote }}\n" + indent + "{{- end }}"
	case "CONFIG_DATA":
		return indent + lead[:len(lead)-1] + "\n" + indent + `  {{- (.Files.Glob "files/*").AsConfig | nindent ` + deeper + " }}"
	case "CHART":
		return indent + lead + `{{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}`
	case "RELEASE":
		return indent + lead + "{{ .Release.Name | quote }}"
	case "SERVICE":
		return indent + lead + "{{ .Release.Service | quote }}"
	}
	return ""
}

// Chart is the Helm chart of the same install, as files by path: Chart.yaml, values.yaml,
// the CRDs in crds/ (Helm installs them first and never deletes them, so `helm uninstall`
// cannot take every custom resource with it), the ConfigMap's files in files/, and a
// template per object. It creates no Namespace: `helm install --create-namespace` does.
// Values: image, replicas (a PodDisruptionBudget from 2), resources, extraArgs.
func (b *Bundle) Chart() (map[string][]byte, error) {
	opts := b.opts
	opts.Namespace = namespaceHole
	p, _, err := build(b.set, opts)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, crd := range b.parts.crds {
		y, err := sigsyaml.Marshal(crd.Object)
		if err != nil {
			return nil, fmt.Errorf("encode CRD %s: %w", crd.GetName(), err)
		}
		files[path.Join("crds", crd.GetName()+".yaml")] = y
	}
	for k, v := range p.configFiles {
		files[path.Join("files", k)] = []byte(v)
	}
	templates := append([]*unstructured.Unstructured{}, p.rbac...)
	templates = append(templates, p.configMap, p.deployment, p.service, p.pdb, p.flowSchema)
	for _, o := range templates {
		o = o.DeepCopy()
		punch(o)
		text, err := templateText(o)
		if err != nil {
			return nil, err
		}
		if o.GetKind() == "PodDisruptionBudget" {
			// A PodDisruptionBudget on one replica would block every node drain.
			text = "{{- if ge (int .Values.replicas) 2 }}\n" + text + "{{- end }}\n"
		}
		// Roles and RoleBindings come one per namespace: one file holds them all.
		name := path.Join("templates", strings.ToLower(o.GetKind())+".yaml")
		if prev, ok := files[name]; ok {
			text = string(prev) + "---\n" + text
		}
		files[name] = []byte(text)
	}
	if files["Chart.yaml"], err = b.chartYAML(); err != nil {
		return nil, err
	}
	if files["values.yaml"], err = b.valuesYAML(); err != nil {
		return nil, err
	}
	return files, nil
}

// punch writes the holes into o.
func punch(o *unstructured.Unstructured) {
	hole := func(name string) string { return holePrefix + name + "__" }
	l := o.GetLabels()
	l["helm.sh/chart"], l["app.kubernetes.io/instance"], l["app.kubernetes.io/managed-by"] = hole("CHART"), hole("RELEASE"), hole("SERVICE")
	o.SetLabels(l)
	switch o.GetKind() {
	case "ConfigMap":
		o.Object["data"] = hole("CONFIG_DATA")
	case "Deployment":
		_ = unstructured.SetNestedField(o.Object, hole("REPLICAS"), "spec", "replicas")
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		c["image"] = hole("IMAGE")
		c["resources"] = hole("RESOURCES")
		c["args"] = append(c["args"].([]any), hole("EXTRA_ARGS"))
		_ = unstructured.SetNestedSlice(o.Object, containers, "spec", "template", "spec", "containers")
	}
}

// templateText encodes o and turns its holes into template actions. Nothing else in it may
// look like a template action: only names and labels ork derived are in it, never user text
// (the Katalog is in files/).
func templateText(o *unstructured.Unstructured) (string, error) {
	y, err := sigsyaml.Marshal(o.Object)
	if err != nil {
		return "", fmt.Errorf("encode %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	text := string(y)
	if strings.Contains(text, "{{") || strings.Contains(text, "}}") {
		return "", fmt.Errorf("%s %s: holds {{ or }}, which Helm would take for a template action", o.GetKind(), o.GetName())
	}
	text = holeLine.ReplaceAllStringFunc(text, func(line string) string {
		m := holeLine.FindStringSubmatch(line)
		return fill(m[1], m[2], m[3])
	})
	if strings.Contains(text, holePrefix) {
		return "", fmt.Errorf("%s %s: a hole left unfilled:\n%s", o.GetKind(), o.GetName(), text)
	}
	return strings.ReplaceAll(text, namespaceHole, "{{ .Release.Namespace }}"), nil
}

func (b *Bundle) chartYAML() ([]byte, error) {
	chart := map[string]any{
		"apiVersion": "v2",
		"name":       b.opts.Name,
		"description": fmt.Sprintf("ork running the operators of %s, with least-privilege RBAC. Generated by ork bundle --helm: regenerate, do not edit.",
			strings.Join(b.sources, ", ")),
		"type":       "application",
		"version":    ChartVersion,
		"appVersion": b.opts.Version,
		"annotations": map[string]string{
			GeneratedAnnotation:       "ork bundle --helm",
			"ork.orkspace.io/command": b.Command() + " --helm DIR",
		},
	}
	y, err := sigsyaml.Marshal(chart)
	if err != nil {
		return nil, fmt.Errorf("encode Chart.yaml: %w", err)
	}
	return y, nil
}

var valuesTemplate = template.Must(template.New("values").Parse(`# Values of the {{ .Name }} chart, generated by ork bundle --helm from {{ .Sources }}.

# The ork image; the default is the release of the ork that generated the chart.
image: {{ .Image }}

# Replicas of ork: one holds the leader Lease and reconciles, the others stand by. From 2
# on, a PodDisruptionBudget (maxUnavailable: 1) keeps one running through node drains.
replicas: {{ .Replicas }}

# Requests and limits of the ork container. No CPU limit by default: throttling can freeze
# the leader past its Lease renewal.
resources:
{{ .Resources }}
# Arguments added to ork run, e.g. [--log-format=json, --kube-api-qps=200]. Not
# --shutdown-timeout: the pod's termination grace period is derived from the one the chart
# was generated with (ork bundle --shutdown-timeout).
extraArgs: []
`))

func (b *Bundle) valuesYAML() ([]byte, error) {
	res, err := sigsyaml.Marshal(Resources())
	if err != nil {
		return nil, fmt.Errorf("encode resources: %w", err)
	}
	image, err := sigsyaml.Marshal(b.opts.Image)
	if err != nil {
		return nil, fmt.Errorf("encode image: %w", err)
	}
	var out bytes.Buffer
	err = valuesTemplate.Execute(&out, map[string]any{
		"Name": b.opts.Name, "Sources": strings.Join(b.sources, ", "), "Image": strings.TrimSpace(string(image)),
		"Replicas": b.opts.Replicas, "Resources": indent(string(res), "  "),
	})
	if err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	return out.Bytes(), nil
}

func indent(s, by string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "")
}
