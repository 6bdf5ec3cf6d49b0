package bundle

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/orkspace/ork/internal/katalog"
)

// MountPath is where the pod mounts the ConfigMap: the in-pod Katalogs and CA files.
const MountPath = "/etc/ork"

// maxConfigMapBytes is the apiserver's limit on a ConfigMap's data.
const maxConfigMapBytes = 1 << 20

// podFiles are the ConfigMap's files: the Katalogs as ork must read them in the pod, and
// the CA bundles they name.
type podFiles struct {
	// data maps a ConfigMap key (a file name under MountPath) to its content.
	data map[string]string
	// katalogs are the keys of the Katalogs, in -f order.
	katalogs []string
}

// configFiles rewrites each Katalog for the pod, where no file it names exists: a crdFile
// gives way to the apiTypes and scope read from it (the bundle installs the CRD), crFiles
// (samples for simulate and dev runs) go, and a tls.caFile's PEM travels in the ConfigMap
// beside the Katalog, which then names it relative to itself.
func configFiles(set *katalog.Set) (podFiles, error) {
	pf := podFiles{data: map[string]string{}}
	caKeys := map[string]string{} // resolved caFile path -> ConfigMap key
	for _, c := range set.CRDs {
		r := c.OperatorBox.Reconcile.Remote
		if r == nil || r.TLS == nil || r.TLS.CAFile == "" {
			continue
		}
		p := c.Source.Resolve(r.TLS.CAFile)
		if _, ok := caKeys[p]; ok {
			continue
		}
		pem, err := os.ReadFile(p)
		if err != nil {
			return pf, fmt.Errorf("crds.%s tls.caFile: %w", c.Name, err)
		}
		key := "ca-" + strconv.Itoa(len(caKeys)+1) + ".crt"
		caKeys[p] = key
		pf.data[key] = string(pem)
	}
	for i, f := range set.Files {
		key := "katalog.yaml"
		if len(set.Files) > 1 {
			key = "katalog-" + strconv.Itoa(i+1) + ".yaml"
		}
		doc, err := podKatalog(f, set, caKeys)
		if err != nil {
			return pf, fmt.Errorf("katalog %s: %w", f.Path, err)
		}
		pf.data[key] = string(doc)
		pf.katalogs = append(pf.katalogs, key)
	}
	size := 0
	for _, v := range pf.data {
		size += len(v)
	}
	if size > maxConfigMapBytes {
		return pf, fmt.Errorf("the in-pod Katalogs and CA files are %d bytes, over a ConfigMap's limit of 1 MiB", size)
	}
	return pf, nil
}

// podKatalog edits the Katalog file f as YAML nodes, so its comments and layout stay.
func podKatalog(f *katalog.File, set *katalog.Set, caKeys map[string]string) ([]byte, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	crds := lookup(&root, "spec", "crds")
	for _, c := range set.CRDs {
		if c.Source != f {
			continue
		}
		node := lookup(crds, c.Name)
		if node == nil || node.Kind != yaml.MappingNode {
			continue
		}
		if c.CRDFile != "" && c.APITypes != nil {
			at := c.APITypes
			types := mapping("group", at.Group, "version", at.Version, "kind", at.Kind, "plural", at.Plural)
			scope := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(c.IsNamespaced())}
			// Where crdFile stood, unless the Katalog already has the key.
			for _, kv := range []struct {
				key string
				v   *yaml.Node
			}{{"apiTypes", types}, {"namespaced", scope}} {
				if existing := lookup(node, kv.key); existing != nil {
					setValue(existing, kv.v)
				} else {
					insertBefore(node, "crdFile", scalar(kv.key), kv.v)
				}
			}
		}
		remove(node, "crdFile")
		remove(node, "crFiles")
		if r := c.OperatorBox.Reconcile.Remote; r != nil && r.TLS != nil && r.TLS.CAFile != "" {
			if ca := lookup(node, "operatorBox", "reconcile", "remote", "tls", "caFile"); ca != nil {
				setValue(ca, scalar(caKeys[c.Source.Resolve(r.TLS.CAFile)]))
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by ork bundle from %s, as ork reads it in the pod:\n"+
		"# crdFile gave way to the apiTypes and scope read from it, crFiles are dropped,\n"+
		"# a tls.caFile is the file of that name beside this one.\n", f.Path)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return b.Bytes(), nil
}

// lookup follows mapping keys from n; nil when one is missing.
func lookup(n *yaml.Node, keys ...string) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// setValue replaces n's value with v's, keeping n's comments.
func setValue(n, v *yaml.Node) {
	head, line, foot := n.HeadComment, n.LineComment, n.FootComment
	*n = *v
	n.HeadComment, n.LineComment, n.FootComment = head, line, foot
}

// insertBefore inserts the pair k: v before key in the mapping n (at the end without key).
func insertBefore(n *yaml.Node, key string, k, v *yaml.Node) {
	at := len(n.Content)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			at = i
		}
	}
	n.Content = slices.Insert(n.Content, at, k, v)
}

// remove deletes key from the mapping n.
func remove(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			return
		}
	}
}

func scalar(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

// mapping is a flow mapping of string pairs, written like `{group: a, version: v1}`.
func mapping(kv ...string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, scalar(kv[i]), scalar(kv[i+1]))
	}
	return n
}
