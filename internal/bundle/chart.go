package bundle

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/rbacgen"
)

// ChartVersion is the default version of a generated chart (ork bundle --chart-version):
// the chart is regenerated from the Katalog; appVersion carries the ork version.
const ChartVersion = "0.1.0"

// Holes are written into the objects before they are encoded, then replaced with template
// actions. The namespace is a valid DNS label and the name a valid operator name, so that
// they go through rbacgen's checks and every name derived from them keeps its shape.
const (
	namespaceHole = "ork-helm-release-namespace-3c7e1f"
	nameHole      = "orkhelmfullname5b9d2e"
	holePrefix    = "__ORK_HOLE_"
	// holeKey is a map key whose line a hole replaces whole (a block of the values' keys
	// merged into a map: podLabels, podAnnotations).
	holeKey = "ork-hole-"
)

// HelmLabels are the labels the chart adds to every object it templates, as Helm's own
// chart scaffold does; the chart also sets app.kubernetes.io/managed-by to Helm (the
// bundle's objects say orkestra), and selects its pods by name and instance.
var HelmLabels = []string{"helm.sh/chart", naming.InstanceLabel}

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
		return indent + "{{- with $.Values." + value + " }}\n" + body + "\n" + indent + "{{- end }}"
	}
	when := func(cond, item string) string {
		return indent + "{{- if " + cond + " }}\n" + indent + "- " + item + "\n" + indent + "{{- end }}"
	}
	switch h {
	case "REPLICAS":
		return indent + lead + "{{ $.Values.replicaCount }}"
	case "IMAGE":
		return indent + lead + `{{ include "` + c.name + `.image" $ | quote }}`
	case "PULL_POLICY":
		return indent + lead + "{{ $.Values.image.pullPolicy }}"
	case "SA_NAME":
		return indent + lead + `{{ include "` + c.name + `.serviceAccountName" $ }}`
	case "RESOURCES":
		return indent + key + "\n" + indent + "  {{- toYaml $.Values.resources | nindent " + fmt.Sprint(n+2) + " }}"
	case "REPLICA_MODE":
		return indent + "{{- if $.Values.sharding.buckets }}\n" +
			indent + `- {{ printf "--shard-buckets=%d" (int $.Values.sharding.buckets) | quote }}` + "\n" +
			indent + "{{- else if $.Values.leaderElection.enabled }}\n" +
			indent + "- --leader-elect\n" + indent + "{{- end }}"
	case "BUCKET_LEASES":
		// The bucket Leases by name, as rbacgen names (naming.BucketLeaseName) and sorts them.
		return indent + "{{- $leases := list }}\n" +
			indent + "{{- range $i := until (int $.Values.sharding.buckets) }}\n" +
			indent + `{{- $leases = append $leases (printf "%s-bucket-%d-of-%d" (include "` + c.name + `.fullname" $) $i (int $.Values.sharding.buckets)) }}` + "\n" +
			indent + "{{- end }}\n" +
			indent + "{{- range sortAlpha $leases }}\n" +
			indent + "- {{ . | quote }}\n" +
			indent + "{{- end }}"
	case "DEBUG_DECISIONS":
		return when("$.Values.debugDecisions.enabled", "--debug-decisions")
	case "LOG_LEVEL":
		return indent + lead + `{{ printf "--log-level=%s" $.Values.logLevel | quote }}`
	case "LOG_FORMAT":
		return indent + lead + `{{ printf "--log-format=%s" $.Values.logFormat | quote }}`
	case "WATCH_NAMESPACES":
		return indent + "{{- range " + watchList + " }}\n" +
			indent + `- {{ printf "--watch-namespace=%s" . | quote }}` + "\n" + indent + "{{- end }}"
	case "ENDPOINTS", "TIMEOUTS", "AUTH_SECRETS":
		return remoteArgs(indent, h)
	case "EXTRA_ARGS":
		return indent + "{{- range $.Values.extraArgs }}\n" + indent + "- {{ . | quote }}\n" + indent + "{{- end }}"
	case "CONFIG_DATA":
		return indent + key + "\n" + indent + `  {{- ($.Files.Glob "files/*").AsConfig | nindent ` + fmt.Sprint(n+2) + " }}"
	case "CHART":
		return indent + lead + `{{ printf "%s-%s" $.Chart.Name $.Chart.Version | replace "+" "_" | quote }}`
	case "RELEASE":
		return indent + lead + "{{ $.Release.Name | quote }}"
	case "APP_NAME":
		return indent + lead + `{{ include "` + c.name + `.name" $ | quote }}`
	case "MANAGED_BY":
		return indent + lead + "{{ $.Release.Service | quote }}"
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
// files in files/, a template per kind, NOTES.txt, and a ServiceMonitor for
// metrics.serviceMonitor.enabled. It creates no Namespace: `helm install
// --create-namespace` does. Its objects are named as Helm charts name theirs (the
// "fullname": the release's name, followed by the chart's unless it holds it, or
// fullnameOverride), so that two releases install side by side; rendered with its default
// values, it gives the bundle's objects with those names and Helm's labels.
func (b *Bundle) Chart() (map[string][]byte, error) {
	opts := b.opts
	opts.Namespace, opts.Name = namespaceHole, nameHole
	opts.WatchNamespaces = nil // the watchNamespaces value's
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
	texts, err := ct.rbacTemplates(b.set, opts)
	if err != nil {
		return nil, err
	}
	auth, err := ct.authSecretRBAC()
	if err != nil {
		return nil, err
	}
	texts = append(texts, auth...)
	for _, o := range []*unstructured.Unstructured{p.configMap, p.deployment, p.service, p.pdb, p.flowSchema} {
		o = o.DeepCopy()
		ct.punch(o)
		text, err := ct.templateText(o)
		if err != nil {
			return nil, err
		}
		texts = append(texts, objectTemplate{kind: o.GetKind(), text: text})
	}
	// One template per kind, named for it; several objects of a kind are documents of it.
	byKind := map[string][]string{}
	var kinds []string
	for _, t := range texts {
		kind := strings.ToLower(t.kind)
		if byKind[kind] == nil {
			kinds = append(kinds, kind)
		}
		byKind[kind] = append(byKind[kind], guard(t.kind, hasCandidate(b.set), ct.watchScope(b.set))+t.text+guardEnd(t.kind))
	}
	for _, kind := range kinds {
		docs := byKind[kind]
		if len(docs) > 1 {
			for i := range docs {
				docs[i] = "---\n" + docs[i]
			}
		}
		files[path.Join("templates", kind+".yaml")] = []byte(strings.Join(docs, ""))
	}
	files["templates/_helpers.tpl"] = []byte(ct.helpers())
	files["templates/servicemonitor.yaml"] = []byte(ct.serviceMonitor())
	files["templates/NOTES.txt"] = []byte(b.notes())
	if files["values.schema.json"], err = b.valuesSchema(); err != nil {
		return nil, err
	}
	if files["Chart.yaml"], err = b.chartYAML(); err != nil {
		return nil, err
	}
	if files["values.yaml"], err = b.valuesYAML(); err != nil {
		return nil, err
	}
	return files, nil
}

// watchScope is why the Katalog's operators cannot be limited to namespaces ("" when they
// can): a cluster-scoped CRD's objects are in none.
func (c chartText) watchScope(set *katalog.Set) string {
	if err := rbacgen.CheckWatchScope(set, []string{watchHole}); err != nil {
		return strings.ReplaceAll(err.Error(), watchHole, "<namespace>")
	}
	return ""
}

// objectTemplate is one object's template text.
type objectTemplate struct{ kind, text string }

// shardProbe is the bucket count the sharded RBAC is generated with for the chart; its
// bucket Lease names become a range over sharding.buckets.
const shardProbe = 2

// guard opens the condition a kind's template renders under ("" for always); candidate is
// whether the Katalog rolls out a reconciler, which `ork run --shard-buckets` refuses;
// noWatch why it cannot watch namespaces ("" when it can).
func guard(kind string, candidate bool, noWatch string) string {
	switch kind {
	case "PodDisruptionBudget":
		// A PodDisruptionBudget on one replica would block every node drain.
		return "{{- if ge (int $.Values.replicaCount) 2 }}\n"
	case "FlowSchema":
		return "{{- if $.Values.flowSchema.enabled }}\n"
	case "ServiceAccount":
		return "{{- if $.Values.serviceAccount.create }}\n"
	case "Deployment":
		// Two replicas without leader election or sharding would both reconcile every object.
		g := "{{- if and (gt (int $.Values.replicaCount) 1) (not $.Values.leaderElection.enabled) (not $.Values.sharding.buckets) }}\n" +
			`{{- fail "replicaCount > 1 needs leaderElection.enabled: true or sharding.buckets (each replica would reconcile every object)" }}` + "\n" +
			"{{- end }}\n" + candidateGuard(candidate)
		if noWatch != "" {
			g += "{{- if $.Values.watchNamespaces }}\n" +
				"{{- fail " + strconv.Quote("watchNamespaces: "+noWatch) + " }}\n{{- end }}\n"
		}
		return g
	}
	return ""
}

// candidateGuard refuses sharding.buckets for a Katalog with a candidate: a rollout's
// state is one ConfigMap that one leader writes.
func candidateGuard(candidate bool) string {
	if !candidate {
		return ""
	}
	return "{{- if $.Values.sharding.buckets }}\n" +
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

// helpers are the chart's named templates: the chart's name and the release's full name,
// as Helm's own chart scaffold defines them (the full name at most 40 characters and a
// DNS-1035 label: it is ork run --name, whose derived names must fit 63), the image
// reference (a tag or a digest) and the ServiceAccount's name.
func (c chartText) helpers() string {
	return `{{/* The chart's name: nameOverride, else the chart's. */}}
{{- define "` + c.name + `.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* The name of every object and ork run --name: fullnameOverride, else the release's
name, followed by the chart's unless it holds it already. */}}
{{- define "` + c.name + `.fullname" -}}
{{- $name := "" -}}
{{- if .Values.fullnameOverride -}}
{{- $name = .Values.fullnameOverride -}}
{{- else -}}
{{- $chart := default .Chart.Name .Values.nameOverride -}}
{{- if contains $chart .Release.Name -}}
{{- $name = .Release.Name -}}
{{- else -}}
{{- $name = printf "%s-%s" .Release.Name $chart -}}
{{- end -}}
{{- end -}}
{{- $name = $name | trunc ` + fmt.Sprint(maxNameLength) + ` | trimSuffix "-" -}}
{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name) -}}
{{- fail (printf "the full name %q is no DNS-1035 label (lower case letters, digits and '-', starting with a letter): set fullnameOverride" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/* The ork image: repository and tag (default the chart's appVersion), or a digest as tag. */}}
{{- define "` + c.name + `.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString -}}
{{- if hasPrefix "sha256:" $tag -}}
{{ .Values.image.repository }}@{{ $tag }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount ork runs as: serviceAccount.name, else the full name. */}}
{{- define "` + c.name + `.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "` + c.name + `.fullname" .) -}}
{{- end -}}
`
}

// punch writes the holes into o.
func (c chartText) punch(o *unstructured.Unstructured) {
	o.SetLabels(helmLabels(o.GetLabels(), true))
	switch o.GetKind() {
	case "Service":
		sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector")
		_ = unstructured.SetNestedStringMap(o.Object, helmLabels(sel, false), "spec", "selector")
	case "PodDisruptionBudget":
		sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
		_ = unstructured.SetNestedStringMap(o.Object, helmLabels(sel, false), "spec", "selector", "matchLabels")
	case "ServiceAccount":
		o.SetName(hole("SA_NAME"))
		_ = unstructured.SetNestedField(o.Object, hole("SA_ANNOTATIONS"), "metadata", "annotations")
	case "ClusterRoleBinding", "RoleBinding":
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			if m := s.(map[string]any); m["kind"] == "ServiceAccount" && m["name"] == nameHole {
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
	sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
	_ = unstructured.SetNestedStringMap(o.Object, helmLabels(sel, false), "spec", "selector", "matchLabels")
	pod, _, _ := unstructured.NestedMap(o.Object, "spec", "template")
	md := pod["metadata"].(map[string]any)
	podLabels := map[string]any{}
	for k, v := range helmLabels(stringMap(md["labels"]), false) {
		podLabels[k] = v
	}
	md["labels"] = podLabels
	podLabels[holeKey+"pod-labels"] = hole("POD_LABELS")
	md["annotations"].(map[string]any)[holeKey+"pod-annotations"] = hole("POD_ANNOTATIONS")
	spec := pod["spec"].(map[string]any)
	spec["serviceAccountName"] = hole("SA_NAME")
	for _, tsc := range spec["topologySpreadConstraints"].([]any) {
		ls := tsc.(map[string]any)["labelSelector"].(map[string]any)
		ml := map[string]any{}
		for k, v := range helmLabels(stringMap(ls["matchLabels"]), false) {
			ml[k] = v
		}
		ls["matchLabels"] = ml
	}
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
	ct["args"] = append(args, hole("WATCH_NAMESPACES"), hole("ENDPOINTS"), hole("TIMEOUTS"), hole("AUTH_SECRETS"), hole("DEBUG_DECISIONS"), hole("EXTRA_ARGS"))
	_ = unstructured.SetNestedMap(o.Object, pod, "spec", "template")
}

// helmLabels are labels, or a selector (all false), as the chart sets them: the chart's
// name and the release's instance, and on labels Helm as manager and the chart.
func helmLabels(l map[string]string, all bool) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		out[k] = v
	}
	out[naming.NameLabel], out[naming.InstanceLabel] = hole("APP_NAME"), hole("RELEASE")
	if all {
		out[naming.ManagedByLabel], out["helm.sh/chart"] = hole("MANAGED_BY"), hole("CHART")
	} else if _, ok := l[naming.ManagedByLabel]; ok {
		out[naming.ManagedByLabel] = hole("MANAGED_BY")
	}
	return out
}

// stringMap is a map of an unstructured object as strings.
func stringMap(m any) map[string]string {
	out := map[string]string{}
	for k, v := range m.(map[string]any) {
		out[k] = fmt.Sprint(v)
	}
	return out
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
	text = strings.ReplaceAll(text, nameHole, `{{ include "`+c.name+`.fullname" $ }}`)
	return strings.ReplaceAll(text, namespaceHole, "{{ $.Release.Namespace }}"), nil
}

// serviceMonitor is the Prometheus Operator's scrape of the metrics Service, under
// metrics.serviceMonitor.enabled.
func (c chartText) serviceMonitor() string {
	return `{{- if .Values.metrics.serviceMonitor.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "` + c.name + `.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
    app.kubernetes.io/name: {{ include "` + c.name + `.name" . | quote }}
    app.kubernetes.io/instance: {{ .Release.Name | quote }}
    helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | quote }}
    {{- with .Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  namespaceSelector:
    matchNames:
      - {{ .Release.Namespace }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ include "` + c.name + `.name" . | quote }}
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
