package render

import (
	"slices"
	"strings"
	"text/template/parse"
)

// FieldPaths returns the dot-paths a template reads from its data (".spec.logLevel"),
// sorted and de-duplicated, so validate can check them against the CRD schema.
func FieldPaths(name, text string) ([]string, error) {
	t, err := Parse(name, text)
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch x := n.(type) {
		case *parse.ListNode:
			if x == nil {
				return
			}
			for _, c := range x.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(x.Pipe)
		case *parse.PipeNode:
			if x == nil {
				return
			}
			for _, c := range x.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range x.Args {
				walk(a)
			}
		case *parse.FieldNode:
			out = append(out, "."+strings.Join(x.Ident, "."))
		case *parse.IfNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		case *parse.RangeNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		case *parse.WithNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		}
	}
	if t.Tree != nil {
		walk(t.Tree.Root)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
