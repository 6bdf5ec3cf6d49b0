package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/suggest"
	"github.com/orkspace/ork/schema"
)

type schemaOptions struct {
	name string
}

func newSchemaCmd(env *Env) *cobra.Command {
	names := strings.Join(schema.Names(), "|")
	cmd := &cobra.Command{
		Use:   "schema " + names,
		Short: "Print a JSON Schema: a Katalog file's, or the remote reconciler's request or result",
		Long: `Print one of the JSON Schemas (draft 2020-12) built into this ork, so that editors and other
tools use the one that matches it:
  katalog                   a Katalog file: every field, its type, default and description,
                            for the YAML language server (completion, hover, inline errors)
  prepared-request          the body ork POSTs to a remote reconciler
  remote-reconcile-result   the body a remote reconciler answers with
The same files are in the repository's schema/ directory.`,
		Example: `  ork schema katalog > katalog.schema.json
  # then, as the Katalog's first line: # yaml-language-server: $schema=./katalog.schema.json
  ork schema remote-reconcile-result | jq '."$defs" | keys'`,
		ValidArgs: schema.Names(),
		Args:      cobra.ArbitraryArgs, // checked in completeSchema, as usage errors with a suggestion
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := completeSchema(args)
			if err != nil {
				return err
			}
			return runSchema(env, opts)
		},
	}
	return cmd
}

func completeSchema(args []string) (schemaOptions, error) {
	names := schema.Names()
	if len(args) != 1 {
		return schemaOptions{}, usageError("ork schema takes one schema name, got %d: want one of %s",
			len(args), strings.Join(names, ", "))
	}
	if _, ok := schema.ByName(args[0]); !ok {
		msg := fmt.Sprintf("unknown schema %q: want one of %s", args[0], strings.Join(names, ", "))
		if near := suggest.Nearest(args[0], names); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return schemaOptions{}, usageError("%s", msg)
	}
	return schemaOptions{name: args[0]}, nil
}

func runSchema(env *Env, opts schemaOptions) error {
	data, _ := schema.ByName(opts.name) // completeSchema checked the name
	_, err := env.Streams.Out.Write(data)
	return err
}
