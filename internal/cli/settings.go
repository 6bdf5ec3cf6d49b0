package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/orkspace/ork/internal/config"
	"github.com/orkspace/ork/internal/suggest"
)

// loadConfig resolves the settings of cmd: --config, else $ORK_CONFIG, else the file in the
// user's config directory when there is one; its whole tree is checked against the commands
// and their flags, and cmd gets the global settings and those of its own section.
func loadConfig(env *Env, cmd *cobra.Command) (*config.Config, error) {
	path := cmd.Flag("config").Value.String()
	if path == "" {
		// The file must be known before viper can read it, so ORK_CONFIG is read here.
		path = env.Getenv(config.EnvPrefix + "_CONFIG")
	}
	if path == "" {
		path = config.DefaultPath(env.Getenv)
	}
	s := config.Settings{Path: path}
	if path != "" {
		f, err := config.ReadFile(path)
		if err != nil {
			return nil, usageError("%v", err)
		}
		if err := checkSection(cmd.Root(), f.Tree, nil, path); err != nil {
			return nil, err
		}
		s = sectionSettings(cmd, f)
	}
	cfg, err := config.Load(cmd.Flags(), s)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return cfg, nil
}

// sectionSettings are the file's global settings overlaid with those of each section on
// the way down to cmd: `rbac: {gen: {namespace: x}}` is --namespace of ork rbac gen only.
func sectionSettings(cmd *cobra.Command, f *config.File) config.Settings {
	var path []string
	for c := cmd; c.HasParent(); c = c.Parent() {
		path = append([]string{c.Name()}, path...)
	}
	s := config.Settings{Path: f.Path, Values: map[string]any{}, Keys: map[string]string{}}
	node, c := f.Tree, cmd.Root()
	for depth := 0; ; depth++ {
		for k, v := range node {
			if subcommand(c, k) == nil {
				s.Values[k], s.Keys[k] = v, strings.Join(append(slices.Clone(path[:depth]), k), ".")
			}
		}
		if depth == len(path) {
			return s
		}
		next, _ := node[path[depth]].(map[string]any)
		if next == nil {
			return s
		}
		node, c = next, subcommand(c, path[depth])
	}
}

// checkSection rejects a key of the settings file that is neither a flag of the command c
// (at the top: a global flag) nor one of its subcommands; a misspelt setting would
// otherwise be ignored without a word, unlike a misspelt Katalog field.
func checkSection(c *cobra.Command, node map[string]any, at []string, file string) error {
	flags := sectionFlags(c)
	for _, k := range slices.Sorted(maps.Keys(node)) {
		where := strings.Join(append(slices.Clone(at), k), ".")
		if sub := subcommand(c, k); sub != nil {
			m, ok := node[k].(map[string]any)
			if !ok {
				return usageError("settings file %s: %s is the command %q: its settings go under it as a mapping (%s: {FLAG: VALUE})",
					file, where, sub.CommandPath(), k)
			}
			if err := checkSection(sub, m, append(slices.Clone(at), k), file); err != nil {
				return err
			}
			continue
		}
		if flags[k] {
			continue
		}
		known := slices.Sorted(maps.Keys(flags))
		for _, sub := range c.Commands() {
			known = append(known, sub.Name())
		}
		msg := fmt.Sprintf("settings file %s: unknown setting %q", file, where)
		if near := suggest.Nearest(k, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		if !c.HasParent() {
			if owners := commandsWithFlag(c, k); len(owners) > 0 {
				return usageError("%s: the top level holds global settings only; a command's go under its name, e.g. %s (commands with --%s: %s)",
					msg, sectionExample(owners[0], k), k, strings.Join(owners, ", "))
			}
		}
		return usageError("%s (settings are the flag names of the command they are under: ork <command> --help lists them)", msg)
	}
	return nil
}

// sectionFlags are the flag names a section may set: the global flags at the top, every
// flag the command accepts below.
func sectionFlags(c *cobra.Command) map[string]bool {
	names := map[string]bool{}
	sets := []*pflag.FlagSet{c.PersistentFlags()}
	if c.HasParent() {
		sets = []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags()}
	}
	for _, fs := range sets {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				names[f.Name] = true
			}
		})
	}
	return names
}

// subcommand is c's subcommand named name, nil when there is none.
func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name {
			return sub
		}
	}
	return nil
}

// commandsWithFlag lists, sorted, the command paths below root that have the local flag.
func commandsWithFlag(root *cobra.Command, flag string) []string {
	var owners []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasParent() && c.LocalNonPersistentFlags().Lookup(flag) != nil {
			owners = append(owners, strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	slices.Sort(owners)
	return owners
}

// sectionExample writes a flag under its command's section: "rbac: {gen: {namespace: …}}".
func sectionExample(command, flag string) string {
	parts := strings.Fields(command)
	s := flag + ": …"
	for i := len(parts) - 1; i >= 0; i-- {
		s = parts[i] + ": {" + s + "}"
	}
	return s
}
