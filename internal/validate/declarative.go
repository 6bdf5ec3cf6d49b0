package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/suggest"
)

// declarative checks the onCreate/onReconcile/onDelete blocks: known block keys, entries
// whose templates parse, and entries that build (see entry). Next to reconcile.remote they are ignored, which is a warning.
func (k *checker) declarative() {
	ob := k.crd.OperatorBox
	for _, b := range []struct {
		name   string
		blocks katalog.DeclaredResources
	}{
		{"onCreate", ob.OnCreate},
		{"onReconcile", ob.OnReconcile},
		{"onDelete", ob.OnDelete},
	} {
		if len(b.blocks) == 0 {
			continue
		}
		if k.crd.IsRemote() {
			k.warnAt(katalog.RuleDeclarativeIgnored, "operatorBox."+b.name,
				fmt.Sprintf("%s is ignored: CRD %q uses reconcile.remote", b.name, k.crd.Name),
				fmt.Sprintf("remove %s, or have the remote reconciler return these resources", b.name))
		}
		for block, entries := range b.blocks {
			at := "operatorBox." + b.name + "." + block
			t, ok := resources.LookupBlock(block)
			if !ok {
				k.errorAt(katalog.RuleResourceBlock, at, fmt.Sprintf("unknown resource block %q in %s", block, b.name), blockHint(block))
				continue
			}
			for i, e := range entries {
				k.templates(fmt.Sprintf("%s[%d]", at, i), e)
				if !k.crd.IsRemote() { // ignored next to remote (warned above): nothing to build
					k.entry(fmt.Sprintf("%s[%d]", at, i), t, e)
					if t.Type == resources.Custom {
						k.customKind(k.api, fmt.Sprintf("%s[%d]", at, i), e)
					}
				}
			}
		}
	}
}

func blockHint(block string) string {
	var known []string
	for _, t := range resources.Types() {
		known = append(known, t.Block)
	}
	slices.Sort(known)
	hint := "known blocks: " + strings.Join(known, ", ")
	if near := suggest.Nearest(block, known); near != "" {
		// The list stays: for short names the nearest block may be no relation ("pods", "jobs").
		hint = fmt.Sprintf("did you mean `%s`? %s", near, hint)
	}
	return hint
}
