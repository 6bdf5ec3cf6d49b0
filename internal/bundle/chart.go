package bundle

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/shard"
)

// ChartVersion is the default version of a generated chart (ork bundle --chart-version):
// the chart is regenerated from the Katalog; appVersion carries the ork version.
const ChartVersion = "0.1.0"

// GeneratedAnnotation marks a chart ork generated, so that --helm may replace it.
// legacyGeneratedAnnotation marked the charts of ork before the one prefix (SPEC §6).
const (
	GeneratedAnnotation       = "orkestra.orkspace.io/generated-by"
	CommandAnnotation         = "orkestra.orkspace.io/command"
	legacyGeneratedAnnotation = "ork.orkspace.io/generated-by"
)

// Holes are written into the objects before they are encoded, then replaced with template
// actions. The namespace is a valid DNS label, so it can go through rbacgen's checks.
const (
	namespaceHole = "ork-helm-release-namespace-3c7e1f"
	holePrefix    = "__ORK_HOLE_"
	// holeKey is a map key whose line a hole replaces whole (a block of the values' keys
	// merged into a map: podLabels, podAnnotations).
	holeKey = "ork-hole-"
)

// HelmLabels are the labels the chart adds to every object it templates; managed-by stays
// orkestra, as on the bundle's objects (SPEC §6).
var HelmLabels = []string{"helm.sh/chart", "app.kubernetes.io/instance"}

// holeLine is a YAML line whose value is a hole: indent, an optional "- " or "key: ", the hole.
var holeLine = regexp.MustCompile(`(?m)^( *)(- |[A-Za-z0-9./_-]+: )` + holePrefix + `([A-Z_]+)__$`)

func hole(name string) string { return holePrefix + name + "__" }

// podSpecValues are the pod spec's keys a value of the same name sets when not empty.
var podSpecValues = map[string]string{
	"IMAGE_PULL_SECRETS":  "imagePullSecrets",
	"NODE_SELECTOR":       "nodeSelector",
	"TOLERATIONS":         "tolerations",
	"AFFINITY":            "affinity",
	"PRIORITY_CLASS_NAME": "priorityClassName",
}

// mapValues are the values merged into a map: the hole stands for the map's entries
// (POD_*), or for the whole map (SA_ANNOTATIONS) when the bundle has none.
var mapValues = map[string]string{
	"POD_LABELS":      "podLabels",
	"POD_ANNOTATIONS": "podAnnotations",
	"SA_ANNOTATIONS":  "serviceAccount.annotations",
}

// fill is the template text for a hole, given the line's indent and its "- " or "key: ".
func (c chartText) fill(indent, lead, h string) string {
	n := len(indent)
	key := strings.TrimSuffix(lead, " ")
	with := func(value, body string) string {
		return indent + "{{- with .Values." + value + " }}\n" + body + "\n" + indent + "{{- end }}"
	}
	when := func(cond, item string) string {
		return indent + "{{- if " + cond + " }}\n" + indent + "- " + item + "\n" + indent + "{{- end }}"
	}
	switch h {
	case "REPLICAS":
		return indent + lead + "{{ .Values.replicaCount }}"
	case "IMAGE":
		return indent + lead + `{{ include "` + c.name + `.image" . | quote }}`
	case "PULL_POLICY":
		return indent + lead + "{{ .Values.image.pullPolicy }}"
	case "SA_NAME":
		return indent + lead + `{{ include "` + c.name + `.serviceAccountName" . }}`
	case "RESOURCES":
		return indent + key + "\n" + indent + "  {{- toYaml .Values.resources | nindent " + fmt.Sprint(n+2) + " }}"
	case "REPLICA_MODE":
		return indent + "{{- if .Values.sharding.buckets }}\n" +
			indent + `- {{ printf "--shard-buckets=%d" (int .Values.sharding.buckets) | quote }}` + "\n" +
			indent + "{{- else if .Values.leaderElection.enabled }}\n" +
			indent + "- --leader-elect\n" + indent + "{{- end }}"
	case "BUCKET_LEASES":
		// The bucket Leases by name, as rbacgen names (shard.BucketLeaseName) and sorts them.
		return indent + "{{- $leases := list }}\n" +
			indent + "{{- range $i := until (int .Values.sharding.buckets) }}\n" +
			indent + `{{- $leases = append $leases (printf "%s-bucket-%d-of-%d" "` + c.name + `" $i (int $.Values.sharding.buckets)) }}` + "\n" +
			indent + "{{- end }}\n" +
			indent + "{{- range sortAlpha $leases }}\n" +
			indent + "- {{ . | quote }}\n" +
			indent + "{{- end }}"
	case "DEBUG_DECISIONS":
		return when(".Values.debugDecisions.enabled", "--debug-decisions")
	case "LOG_LEVEL":
		return indent + lead + `{{ printf "--log-level=%s" .Values.logLevel | quote }}`
	case "LOG_FORMAT":
		return indent + lead + `{{ printf "--log-format=%s" .Values.logFormat | quote }}`
	case "EXTRA_ARGS":
		return indent + "{{- range .Values.extraArgs }}\n" + indent + "- {{ . | quote }}\n" + indent + "{{- end }}"
	case "CONFIG_DATA":
		return indent + key + "\n" + indent + `  {{- (.Files.Glob "files/*").AsConfig | nindent ` + fmt.Sprint(n+2) + " }}"
	case "CHART":
		return indent + lead + `{{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}`
	case "RELEASE":
		return indent + lead + "{{ .Release.Name | quote }}"
	case "POD_LABELS", "POD_ANNOTATIONS":
		// Merged into a map the bundle fills: the line is the map's entries.
		return with(mapValues[h], indent+"{{- toYaml . | nindent "+fmt.Sprint(n)+" }}")
	case "PRIORITY_CLASS_NAME":
		return with(podSpecValues[h], indent+key+" {{ . | quote }}")
	}
	v, ok := podSpecValues[h]
	if !ok {
		v, ok = mapValues[h]
	}
	if ok {
		return with(v, indent+key+"\n"+indent+"  {{- toYaml . | nindent "+fmt.Sprint(n+2)+" }}")
	}
	return indent + lead + hole(h) // unknown: left for templateText to report
}

// chartText turns the bundle's objects into the chart's templates.
type chartText struct {
	// name is the chart's (the operator's) name, and the prefix of its named templates.
	name string
}

// Chart is the Helm chart of the same install, as files by path: Chart.yaml, values.yaml
// and values.schema.json, the CRDs in crds/ (Helm installs them first and never deletes
// them, so `helm uninstall` cannot take every custom resource with it), the ConfigMap's
// files in files/, a template per object, NOTES.txt, and a ServiceMonitor for
// metrics.serviceMonitor.enabled. It creates no Namespace: `helm install
// --create-namespace` does. Rendered with its default values, the chart gives the
// bundle's objects (with Helm's chart and instance labels).
func (b *Bundle) Chart() (map[string][]byte, error) {
	opts := b.opts
	opts.Namespace = namespaceHole
	p, _, err := build(b.set, opts)
	if err != nil {
		return nil, err
	}
	ct := chartText{name: b.opts.Name}
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
	rbac, err := ct.rbacTemplates(b.set, opts)
	if err != nil {
		return nil, err
	}
	templates := append([]*unstructured.Unstructured{}, p.configMap, p.deployment, p.service, p.pdb, p.flowSchema)
	texts := rbac
	for _, o := range templates {
		o = o.DeepCopy()
		ct.punch(o)
		text, err := ct.templateText(o)
		if err != nil {
			return nil, err
		}
		texts = append(texts, objectTemplate{kind: o.GetKind(), text: text})
	}
	seen := map[string]int{}
	for _, t := range texts {
		text := guard(t.kind, hasCandidate(b.set)) + t.text + guardEnd(t.kind)
		kind := strings.ToLower(t.kind)
		file := kind + ".yaml"
		if seen[kind]++; seen[kind] > 1 { // rbacgen may give several Roles and RoleBindings
			file = fmt.Sprintf("%s-%d.yaml", kind, seen[kind])
		}
		files[path.Join("templates", file)] = []byte(text)
	}
	files["templates/_helpers.tpl"] = []byte(ct.helpers())
	files["templates/servicemonitor.yaml"] = []byte(serviceMonitor(b.opts.Name))
	files["templates/NOTES.txt"] = []byte(b.notes())
	files["values.schema.json"] = []byte(valuesSchema)
	if files["Chart.yaml"], err = b.chartYAML(); err != nil {
		return nil, err
	}
	if files["values.yaml"], err = b.valuesYAML(); err != nil {
		return nil, err
	}
	return files, nil
}

// objectTemplate is one object's template text.
type objectTemplate struct{ kind, text string }

// shardProbe is the bucket count the sharded RBAC is generated with for the chart; its
// bucket Lease names become a range over sharding.buckets.
const shardProbe = 2

// rbacTemplates are the RBAC objects' templates. Leader election and sharding need other
// Lease rights in ork's namespace: an object that differs between the two modes renders
// the one sharding.buckets picks, each exactly rbacgen's.
func (c chartText) rbacTemplates(set *katalog.Set, opts Options) ([]objectTemplate, error) {
	opts.ShardBuckets = 0
	leader, _, err := build(set, opts)
	if err != nil {
		return nil, err
	}
	sharded := leader
	if !hasCandidate(set) { // a rollout cannot be sharded: the Deployment's guard refuses it
		opts.ShardBuckets = shardProbe
		if sharded, _, err = build(set, opts); err != nil {
			return nil, err
		}
	}
	if len(sharded.rbac) != len(leader.rbac) {
		return nil, fmt.Errorf("the RBAC of the two modes differs in its objects: %d against %d", len(sharded.rbac), len(leader.rbac))
	}
	var out []objectTemplate
	for i, l := range leader.rbac {
		s := sharded.rbac[i]
		if s.GetKind() != l.GetKind() || s.GetName() != l.GetName() || s.GetNamespace() != l.GetNamespace() {
			return nil, fmt.Errorf("the RBAC of the two modes differs: %s %s against %s %s", s.GetKind(), s.GetName(), l.GetKind(), l.GetName())
		}
		l, s = l.DeepCopy(), s.DeepCopy()
		c.punch(l)
		c.punch(s)
		c.punchBucketLeases(s)
		lt, err := c.templateText(l)
		if err != nil {
			return nil, err
		}
		st, err := c.templateText(s)
		if err != nil {
			return nil, err
		}
		if st != lt {
			lt = "{{- if .Values.sharding.buckets }}\n" + st + "{{- else }}\n" + lt + "{{- end }}\n"
		}
		out = append(out, objectTemplate{kind: l.GetKind(), text: lt})
	}
	return out, nil
}

// punchBucketLeases puts a hole for the bucket Leases' names where rbacgen listed
// shardProbe of them.
func (c chartText) punchBucketLeases(o *unstructured.Unstructured) {
	rules, found, _ := unstructured.NestedSlice(o.Object, "rules")
	if !found {
		return
	}
	probe := make([]any, shardProbe)
	for i := range probe {
		probe[i] = shard.BucketLeaseName(c.name, i, shardProbe)
	}
	for _, r := range rules {
		m := r.(map[string]any)
		if names, _ := m["resourceNames"].([]any); slices.Equal(names, probe) {
			m["resourceNames"] = []any{hole("BUCKET_LEASES")}
		}
	}
	_ = unstructured.SetNestedSlice(o.Object, rules, "rules")
}

// guard opens the condition a kind's template renders under ("" for always); candidate is
// whether the Katalog rolls out a reconciler, which `ork run --shard-buckets` refuses.
func guard(kind string, candidate bool) string {
	switch kind {
	case "PodDisruptionBudget":
		// A PodDisruptionBudget on one replica would block every node drain.
		return "{{- if ge (int .Values.replicaCount) 2 }}\n"
	case "FlowSchema":
		return "{{- if .Values.flowSchema.enabled }}\n"
	case "ServiceAccount":
		return "{{- if .Values.serviceAccount.create }}\n"
	case "Deployment":
		// Two replicas without leader election or sharding would both reconcile every object.
		return "{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) (not .Values.sharding.buckets) }}\n" +
			`{{- fail "replicaCount > 1 needs leaderElection.enabled: true or sharding.buckets (each replica would reconcile every object)" }}` + "\n" +
			"{{- end }}\n" + candidateGuard(candidate)
	}
	return ""
}

// candidateGuard refuses sharding.buckets for a Katalog with a candidate: a rollout's
// state is one ConfigMap that one leader writes.
func candidateGuard(candidate bool) string {
	if !candidate {
		return ""
	}
	return "{{- if .Values.sharding.buckets }}\n" +
		`{{- fail "sharding.buckets: the Katalog rolls out a reconciler (reconcile.remote.candidate), whose state one leader writes: set it to 0" }}` + "\n" +
		"{{- end }}\n"
}

func guardEnd(kind string) string {
	switch kind {
	case "PodDisruptionBudget", "FlowSchema", "ServiceAccount":
		return "{{- end }}\n"
	}
	return ""
}

// helpers are the chart's named templates: the image reference (a tag or a digest) and
// the ServiceAccount's name.
func (c chartText) helpers() string {
	return `{{/* The ork image: repository and tag (default the chart's appVersion), or a digest as tag. */}}
{{- define "` + c.name + `.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString -}}
{{- if hasPrefix "sha256:" $tag -}}
{{ .Values.image.repository }}@{{ $tag }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount ork runs as: serviceAccount.name, else the operator's name. */}}
{{- define "` + c.name + `.serviceAccountName" -}}
{{ .Values.serviceAccount.name | default "` + c.name + `" }}
{{- end -}}
`
}

// punch writes the holes into o.
func (c chartText) punch(o *unstructured.Unstructured) {
	l := o.GetLabels()
	l["helm.sh/chart"], l["app.kubernetes.io/instance"] = hole("CHART"), hole("RELEASE")
	o.SetLabels(l)
	switch o.GetKind() {
	case "ServiceAccount":
		o.SetName(hole("SA_NAME"))
		_ = unstructured.SetNestedField(o.Object, hole("SA_ANNOTATIONS"), "metadata", "annotations")
	case "ClusterRoleBinding", "RoleBinding":
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			if m := s.(map[string]any); m["kind"] == "ServiceAccount" && m["name"] == c.name {
				m["name"] = hole("SA_NAME")
			}
		}
		_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
	case "FlowSchema":
		rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
		for _, r := range rules {
			subjects, _, _ := unstructured.NestedSlice(r.(map[string]any), "subjects")
			for _, s := range subjects {
				if sa, ok := s.(map[string]any)["serviceAccount"].(map[string]any); ok {
					sa["name"] = hole("SA_NAME")
				}
			}
			_ = unstructured.SetNestedSlice(r.(map[string]any), subjects, "subjects")
		}
		_ = unstructured.SetNestedSlice(o.Object, rules, "spec", "rules")
	case "ConfigMap":
		o.Object["data"] = hole("CONFIG_DATA")
	case "Deployment":
		c.punchDeployment(o)
	}
}

func (c chartText) punchDeployment(o *unstructured.Unstructured) {
	_ = unstructured.SetNestedField(o.Object, hole("REPLICAS"), "spec", "replicas")
	pod, _, _ := unstructured.NestedMap(o.Object, "spec", "template")
	md := pod["metadata"].(map[string]any)
	md["labels"].(map[string]any)[holeKey+"pod-labels"] = hole("POD_LABELS")
	md["annotations"].(map[string]any)[holeKey+"pod-annotations"] = hole("POD_ANNOTATIONS")
	spec := pod["spec"].(map[string]any)
	spec["serviceAccountName"] = hole("SA_NAME")
	for h, key := range podSpecValues {
		spec[key] = hole(h)
	}
	containers := spec["containers"].([]any)
	ct := containers[0].(map[string]any)
	ct["image"], ct["imagePullPolicy"], ct["resources"] = hole("IMAGE"), hole("PULL_POLICY"), hole("RESOURCES")
	var args []any
	for _, a := range ct["args"].([]any) {
		switch s := a.(string); {
		case s == "--leader-elect" || strings.HasPrefix(s, "--shard-buckets="):
			args = append(args, hole("REPLICA_MODE"))
		case strings.HasPrefix(s, "--log-level="):
			args = append(args, hole("LOG_LEVEL"))
		case strings.HasPrefix(s, "--log-format="):
			args = append(args, hole("LOG_FORMAT"))
		default:
			args = append(args, a)
		}
	}
	ct["args"] = append(args, hole("DEBUG_DECISIONS"), hole("EXTRA_ARGS"))
	_ = unstructured.SetNestedMap(o.Object, pod, "spec", "template")
}

// templateText encodes o and turns its holes into template actions. Nothing else in it may
// look like a template action: only names and labels ork derived are in it, never user text
// (the Katalog is in files/).
func (c chartText) templateText(o *unstructured.Unstructured) (string, error) {
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
		lead := m[2]
		if strings.HasPrefix(lead, holeKey) {
			lead = ""
		}
		return c.fill(m[1], lead, m[3])
	})
	if strings.Contains(text, holePrefix) || strings.Contains(text, holeKey) {
		return "", fmt.Errorf("%s %s: a hole left unfilled:\n%s", o.GetKind(), o.GetName(), text)
	}
	return strings.ReplaceAll(text, namespaceHole, "{{ .Release.Namespace }}"), nil
}

// serviceMonitor is the Prometheus Operator's scrape of the metrics Service, under
// metrics.serviceMonitor.enabled. name is a DNS label (CheckName): no template text.
func serviceMonitor(name string) string {
	return `{{- if .Values.metrics.serviceMonitor.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: ` + name + `
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/managed-by: orkestra
    app.kubernetes.io/name: ` + name + `
    app.kubernetes.io/instance: {{ .Release.Name | quote }}
    helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
    {{- with .Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  namespaceSelector:
    matchNames:
      - {{ .Release.Namespace }}
  selector:
    matchLabels:
      app.kubernetes.io/name: ` + name + `
      app.kubernetes.io/instance: {{ .Release.Name | quote }}
  endpoints:
    - port: metrics
      path: /metrics
      {{- with .Values.metrics.serviceMonitor.interval }}
      interval: {{ . }}
      {{- end }}
{{- end }}
`
}
