package main

import (
	"fmt"
	"strings"
)

// crdKind is one of a workload's CRDs, in benchGroup.
type crdKind struct{ kind, plural string }

// managedResource is a child type the Katalog declares.
type managedResource struct{ group, plural string }

// workload is what the systems are asked to do: the CRDs the N custom resources are split
// across (in turn), the reconciler's answer for each, and what those answers write.
type workload struct {
	name  string
	kinds []crdKind
	// configMaps is the number of ConfigMaps each CR is answered with; 0 for the default
	// answer (a Deployment and a Service).
	configMaps int
	// startup: the CRs exist before ork starts; measured is the time from one spec edit,
	// made as soon as ork is ready, to that CR Ready at the edited generation.
	startup bool
}

var appKind = crdKind{kind: "App", plural: "apps"}

// workloads are the -workload choices.
var workloads = map[string]workload{
	"default":  {name: "default", kinds: []crdKind{appKind}},
	"fanout10": {name: "fanout10", kinds: []crdKind{appKind}, configMaps: 10},
	"fanout20": {name: "fanout20", kinds: []crdKind{appKind}, configMaps: 20},
	"multicrd": {name: "multicrd", kinds: []crdKind{appKind, {kind: "Db", plural: "dbs"}, {kind: "Cache", plural: "caches"}}},
	"startup":  {name: "startup", kinds: []crdKind{appKind}, startup: true},
}

func parseWorkloads(s string) ([]workload, error) {
	var out []workload
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		w, ok := workloads[f]
		if !ok {
			return nil, fmt.Errorf("unknown workload %q (default, fanout10, fanout20, multicrd, startup)", f)
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no workload")
	}
	return out, nil
}

// kindOf is the CRD the i-th CR is created in: N is split across the CRDs in turn.
func (w workload) kindOf(i int) crdKind { return w.kinds[i%len(w.kinds)] }

// answer is the RemoteReconcileResult for the CR name: what every system writes for it.
func (w workload) answer(name string) map[string]any {
	var res []any
	if w.configMaps == 0 {
		res = []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": "nginx:1.27", "port": 8080}},
			map[string]any{"type": "service", "fields": map[string]any{"name": name + "-svc", "port": 80, "targetPort": 8080}},
		}
	}
	for i := range w.configMaps {
		res = append(res, map[string]any{"type": "configmap", "fields": map[string]any{
			"name": fmt.Sprintf("%s-cm-%02d", name, i), "data": map[string]any{"key": name}}})
	}
	return map[string]any{"result": "ok", "status": map[string]any{"phase": "Ready"}, "resources": res}
}

// managed are the child types the Katalog declares for every CRD.
func (w workload) managed() []managedResource {
	if w.configMaps > 0 {
		return []managedResource{{"", "configmaps"}}
	}
	return []managedResource{{"apps", "deployments"}, {"", "services"}}
}

// isReconcileWrite reports whether a resource (as the apiserver's request counts name it)
// is one a reconcile writes: a child type or a CR's status.
func (w workload) isReconcileWrite(resource string) bool {
	for _, m := range w.managed() {
		if resource == m.plural {
			return true
		}
	}
	for _, k := range w.kinds {
		if resource == k.plural+"/status" {
			return true
		}
	}
	return false
}

// isReconcileRead reports whether a resource is one a GET of counts as a reconcile's read:
// a child or a CR.
func (w workload) isReconcileRead(resource string) bool {
	for _, m := range w.managed() {
		if resource == m.plural {
			return true
		}
	}
	for _, k := range w.kinds {
		if resource == k.plural {
			return true
		}
	}
	return false
}

// isCR reports whether resource is one of the workload's CRDs (not a subresource).
func (w workload) isCR(resource string) bool {
	for _, k := range w.kinds {
		if resource == k.plural {
			return true
		}
	}
	return false
}

// katalog is ork's Katalog for the workload: one CRD entry per kind, all answered by the
// one reconciler at endpoint.
func (w workload) katalog(endpoint string) string {
	var b strings.Builder
	b.WriteString("apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nmetadata: {name: bench}\nspec:\n  crds:\n")
	for _, k := range w.kinds {
		fmt.Fprintf(&b, "    %s:\n      apiTypes: {group: %s, version: v1, kind: %s, plural: %s}\n", strings.ToLower(k.kind), benchGroup, k.kind, k.plural)
		fmt.Fprintf(&b, "      operatorBox:\n        reconcile:\n          default: false\n          remote:\n            endpoint: %q\n            managedResources:\n", endpoint)
		for _, m := range w.managed() {
			fmt.Fprintf(&b, "              - {group: %q, plural: %s}\n", m.group, m.plural)
		}
	}
	return b.String()
}

// crdManifest is the CRD of kind k: spec and status free-form, with a status subresource.
func crdManifest(k crdKind) string {
	return fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]s.%[3]s
spec:
  group: %[3]s
  scope: Namespaced
  names: {kind: %[1]s, plural: %[2]s, singular: %[4]s, listKind: %[1]sList}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, k.kind, k.plural, benchGroup, strings.ToLower(k.kind))
}

// kindNamed is the workload's CRD of that plural (the first if none is).
func (w workload) kindNamed(plural string) crdKind {
	for _, k := range w.kinds {
		if k.plural == plural {
			return k
		}
	}
	return w.kinds[0]
}
