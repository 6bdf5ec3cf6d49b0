// Package declarative is ork's built-in reconciler: it renders a CRD's onCreate, onReconcile
// and onDelete blocks against one custom resource and builds the objects they declare. It
// only computes; applying is the caller's (ork run, ork simulate).
package declarative

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/suggest"
)

// Plan is what one custom resource's children should be, in Katalog order.
type Plan struct {
	// CreateIfMissing are the onCreate objects: created when absent, never updated after.
	CreateIfMissing []resources.Object
	// Apply are the onReconcile objects: applied on every pass.
	Apply []resources.Object
	// Delete are the onDelete objects: deleted when the custom resource is deleted.
	Delete []resources.Object
}

// Desired renders c's onCreate, onReconcile and onDelete entries against cr (the custom
// resource as a map: .metadata.name, .spec.x) and builds each. Zero fields of opts default
// from cr: Namespace to its namespace, SelectorLabels to resources.OptionsFor's. Whether the
// declarative reconciler is on (reconcile.default) is the caller's decision.
//
// Every error names the Katalog file and line of the entry or template at fault:
// `katalog.yaml:17: crds.website.operatorBox.onCreate.deployments[0].image: render template: ...`.
func Desired(c *katalog.CRD, cr map[string]any, opts resources.Options) (Plan, error) {
	return New(c).Desired(cr, opts)
}

// Reconciler renders one CRD's blocks, parsing each template once across calls: ork run
// renders them on every reconcile. Safe for concurrent use.
type Reconciler struct {
	crd       *katalog.CRD
	templates render.Cache
}

// New returns the declarative reconciler of c.
func New(c *katalog.CRD) *Reconciler { return &Reconciler{crd: c} }

// Desired is the package-level Desired, with templates parsed once per Reconciler.
func (r *Reconciler) Desired(cr map[string]any, opts resources.Options) (Plan, error) {
	c := r.crd
	def := resources.OptionsFor(nestedString(cr, "namespace"), nestedString(cr, "name"))
	if opts.Namespace == "" {
		opts.Namespace = def.Namespace
	}
	if opts.SelectorLabels == nil {
		opts.SelectorLabels = def.SelectorLabels
	}
	var p Plan
	var err error
	ob := c.OperatorBox
	if p.CreateIfMissing, err = r.build("onCreate", ob.OnCreate, cr, opts); err != nil {
		return Plan{}, err
	}
	if p.Apply, err = r.build("onReconcile", ob.OnReconcile, cr, opts); err != nil {
		return Plan{}, err
	}
	if p.Delete, err = r.build("onDelete", ob.OnDelete, cr, opts); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// build renders and builds one block set; blocks go in the order they are written.
func (r *Reconciler) build(section string, blocks katalog.DeclaredResources, cr map[string]any, opts resources.Options) ([]resources.Object, error) {
	c := r.crd
	f := c.Source
	at := func(rest string) string { return katalog.CRDPath(c.Name, "operatorBox."+section+rest) }
	keys := slices.SortedFunc(maps.Keys(blocks), func(a, b string) int {
		return cmp.Or(cmp.Compare(f.Pos(at("."+a)).Line, f.Pos(at("."+b)).Line), strings.Compare(a, b))
	})
	var out []resources.Object
	for _, block := range keys {
		t, ok := resources.LookupBlock(block)
		if !ok {
			return nil, unknownBlock(f, at("."+block), block)
		}
		for i, entry := range blocks[block] {
			path := at(fmt.Sprintf(".%s[%d]", block, i))
			rendered, err := r.renderTree(f, path, entry, cr)
			if err != nil {
				return nil, err
			}
			o, err := resources.BuildIntent(t.Type, rendered.(map[string]any), opts)
			if err != nil {
				return nil, buildError(f, path, err)
			}
			out = append(out, o)
		}
	}
	return out, nil
}

// renderTree renders every template string below v; each is named by the file and line it
// stands on, so a missing key points at the exact line.
func (r *Reconciler) renderTree(f *katalog.File, path string, v any, cr map[string]any) (any, error) {
	switch x := v.(type) {
	case string:
		if !render.IsTemplate(x) {
			return x, nil
		}
		name := fmt.Sprintf("%s:%d", f.Path, f.Pos(path).Line)
		out, err := r.templates.Value(name, x, cr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, katalog.DisplayPath(path), err)
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		// In key order, so that of two broken templates every pass reports the same one.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			e := x[k]
			v, err := r.renderTree(f, path+"."+k, e, cr)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			v, err := r.renderTree(f, fmt.Sprintf("%s[%d]", path, i), e, cr)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return v, nil
}

// buildError locates a build error at the offending field's line when it has one.
func buildError(f *katalog.File, entry string, err error) error {
	line := f.Pos(entry).Line
	var fe *resources.FieldError
	if errors.As(err, &fe) && fe.Field != "" {
		line = f.Pos(entry + "." + fe.Field).Line
	}
	return fmt.Errorf("%s:%d: %w", f.Path, line, resources.AtEntry(err, katalog.DisplayPath(entry)))
}

func unknownBlock(f *katalog.File, path, block string) error {
	var names []string
	for _, t := range resources.Types() {
		names = append(names, t.Block)
	}
	hint := "known blocks: " + strings.Join(names, ", ")
	if near := suggest.Nearest(block, names); near != "" {
		hint = fmt.Sprintf("did you mean %q?", near)
	}
	return fmt.Errorf("%s:%d: %s: unknown resource block %q (%s)",
		f.Path, f.Pos(path).Line, katalog.DisplayPath(path), block, hint)
}

// nestedString reads metadata.<field> of a custom resource.
func nestedString(cr map[string]any, field string) string {
	meta, _ := cr["metadata"].(map[string]any)
	s, _ := meta[field].(string)
	return s
}
