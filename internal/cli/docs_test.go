package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const cliDocs = "../../docs/cli.md"

// docs/cli.md is rendered from the command tree, so it cannot drift from `ork --help`.
func TestCLIDocsAreUpToDate(t *testing.T) {
	root := NewRootCmd(&Env{Getenv: func(string) string { return "" }})
	got := renderCLIDocs(root)
	if goldenfile.Update() {
		if err := os.WriteFile(cliDocs, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(cliDocs)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -run TestCLIDocs -update)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is out of date: run go test ./internal/cli -run TestCLIDocs -update and commit it.\n%s",
			filepath.Clean(cliDocs), firstDiff(string(want), string(got)))
	}
}

// renderCLIDocs writes every available command, depth first in cobra's (sorted) order, with
// its usage, description, examples and flags as Markdown.
func renderCLIDocs(root *cobra.Command) []byte {
	root.InitDefaultCompletionCmd()
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	walk(root)

	var b strings.Builder
	b.WriteString("<!-- Generated from the command tree by `go test ./internal/cli -run TestCLIDocs -update`. DO NOT EDIT. -->\n\n")
	b.WriteString("# ork command reference\n\n")
	b.WriteString("Every flag can also be set in the environment as `ORK_<FLAG>` (`--log-level` is `ORK_LOG_LEVEL`)\n" +
		"or in the settings file (`--config`, else `$XDG_CONFIG_HOME/ork/config.yaml`, by default\n" +
		"`~/.config/ork/config.yaml`; never `./ork.yaml`): global flags at the top, each command's\n" +
		"flags under its name (`run: {namespace: ops}`, `rbac: {gen: {namespace: ops}}`).\n" +
		"A flag wins over the environment, which wins over the file.\n\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "- [`%s`](#%s) — %s\n", c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	for _, c := range cmds {
		renderCommand(&b, c)
	}
	return []byte(b.String())
}

func renderCommand(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "\n## %s\n\n%s\n\n", c.CommandPath(), c.Short)
	if long := strings.TrimSpace(c.Long); long != "" && long != c.Short {
		fmt.Fprintf(b, "%s\n\n", long)
	}
	usage := c.UseLine()
	if !c.Runnable() {
		usage = c.CommandPath() + " [command]"
	}
	fmt.Fprintf(b, "```\n%s\n```\n", usage)
	if ex := strings.TrimRight(c.Example, "\n "); ex != "" {
		fmt.Fprintf(b, "\n### Examples\n\n```sh\n%s\n```\n", ex)
	}
	isRoot := c == c.Root()
	local := c.LocalFlags()
	if isRoot {
		local = c.LocalNonPersistentFlags()
	}
	if local.HasAvailableFlags() {
		b.WriteString("\n### Flags\n\n")
		renderFlags(b, local)
	}
	if isRoot && c.HasAvailablePersistentFlags() {
		b.WriteString("\n### Global flags (accepted by every command)\n\n")
		renderFlags(b, c.PersistentFlags())
	} else if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(b, "\nGlobal flags: see [`%s`](#%s).\n", c.Root().Name(), anchor(c.Root().Name()))
	}
}

func renderFlags(b *strings.Builder, fs *pflag.FlagSet) {
	b.WriteString("| Flag | Type | Default | Description |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		def := f.DefValue
		switch def {
		case "", "[]":
			def = ""
		default:
			def = "`" + def + "`"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, f.Value.Type(), def, escapeCell(f.Usage))
	})
}

// anchor is GitHub's heading anchor for a command path: "ork rbac gen" -> "ork-rbac-gen".
func anchor(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }

func escapeCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// firstDiff shows the first differing line, enough to see what changed.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  docs/cli.md: %q\n  generated:   %q", i+1, wl, gl)
		}
	}
	return ""
}
