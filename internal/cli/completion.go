package cli

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orkspace/ork/internal/gentypes"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/scaffold"
	"github.com/orkspace/ork/internal/suggest"
)

// unknownFlag matches pflag's "unknown flag: --name".
var unknownFlag = regexp.MustCompile(`^unknown flag: --([^=\s]+)$`)

// withFlagSuggestion adds a did-you-mean to an unknown flag, in the style of the unknown
// command's: (did you mean "--name"?).
func withFlagSuggestion(c *cobra.Command, err error) error {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if near := suggest.Nearest(m[1], names); near != "" {
		return fmt.Errorf("%w (did you mean \"--%s\"?)", err, near)
	}
	return err
}

// registerCompletions completes flag values: -o with the command's formats, init's
// --remote with the reconcilers it writes, --crd with the CRDs of the -f Katalogs, and
// -f with YAML files.
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.LocalFlags().Lookup("output"); f != nil {
			formats := outputFormats(f.Usage)
			_ = c.RegisterFlagCompletionFunc("output", fixed(formats...))
		}
		if c.LocalFlags().Lookup("filename") != nil {
			_ = c.RegisterFlagCompletionFunc("filename", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
			})
		}
		if c.LocalFlags().Lookup("crd") != nil {
			_ = c.RegisterFlagCompletionFunc("crd", completeCRDs)
		}
		if c.Name() == "types" && c.Parent().Name() == "gen" {
			_ = c.RegisterFlagCompletionFunc("lang", fixed(string(gentypes.Go), string(gentypes.Python), string(gentypes.TypeScript)))
			_ = c.MarkFlagDirname("out-dir")
		}
		if c.Name() == "init" {
			_ = c.RegisterFlagCompletionFunc("remote", fixed(string(scaffold.RemoteGo), string(scaffold.RemotePython), string(scaffold.RemoteNone)))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// outputFormats reads the formats back from addOutputFlag's usage: "output format: a|b".
func outputFormats(usage string) []string {
	_, list, _ := strings.Cut(usage, ": ")
	return strings.Split(list, "|")
}

func fixed(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeCRDs lists the CRD names of the Katalogs that -f names (katalog.yaml without).
func completeCRDs(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	files, _ := c.Flags().GetStringArray("filename")
	set, _, err := katalog.Load(files)
	if err != nil || set == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, crd := range set.CRDs {
		names = append(names, crd.Name)
	}
	slices.Sort(names)
	return names, cobra.ShellCompDirectiveNoFileComp
}
