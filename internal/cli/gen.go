package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/gentypes"
)

func newGenCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Generate code from a Katalog for your reconciler",
		Args:  unknownSubcommand,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newGenTypesCmd(env))
	return cmd
}

type genTypesOptions struct {
	files  []string
	outDir string
	gen    gentypes.Options
}

func newGenTypesCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "types --lang go|python|ts [-f katalog.yaml]... [--out-dir DIR]",
		Short: "Print the types of a Katalog's custom resources for a reconciler in Go, Python or TypeScript",
		Long: `Print the types of each CRD of the Katalogs for a remote reconciler written in Go, Python or
TypeScript, to build on the reconciler SDK's request and answer types (sdk/):
  - <Kind>, <Kind>Spec and <Kind>Status, and the types they nest, from the CRD's
    openAPIV3Schema (enums, required and nullable fields, int-or-string, maps and lists);
  - <Kind>Args, reconcile.remote.args as ork sends them: an arg that is a bare field
    reference ("{{ .spec.replicas }}") has that field's type, null when the field can be
    missing; any other template is text;
  - <Kind>Related, payload.related: per entry, the objects found, typed as the Katalog's CRD
    of that kind, a ConfigMap or a Secret, or as a map for any other kind.
Go structs (package main, or --package) with JSON tags, Python TypedDicts (mypy --strict),
TypeScript interfaces (tsc --strict). The same Katalog gives the same bytes, so a CI job can
regenerate and diff; a renamed CRD field then fails the reconciler's compile or type check,
naming the field. With --out-dir the file is written into DIR (types_gen.go, ork_types.py or
ork-types.ts) and its path printed. The Katalog is validated first; an invalid one is reported
as validate does (exit 1).`,
		Example: `  ork gen types --lang go -f examples/remote/katalog.yaml --out-dir reconciler/
  ork gen types --lang python -f katalog.yaml > reconciler/ork_types.py
  ork gen types --lang ts -f katalog.yaml --out-dir src/`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := completeGenTypes(env)
			if err != nil {
				return err
			}
			return runGenTypes(env, opts)
		},
	}
	addKatalogFlag(cmd)
	f := cmd.Flags()
	f.String("lang", "", "the reconciler's language: go, python or ts (required)")
	f.String("out-dir", "", "write the file into this directory (created when missing) instead of printing it")
	f.String("package", gentypes.DefaultPackage, "the package of the Go file")
	return cmd
}

func completeGenTypes(env *Env) (genTypesOptions, error) {
	cfg := env.Config()
	opts := genTypesOptions{
		files:  cfg.StringSlice("filename"),
		outDir: cfg.String("out-dir"),
		gen:    gentypes.Options{Lang: gentypes.Lang(cfg.String("lang")), Package: cfg.String("package")},
	}
	return opts, validateGenTypes(opts)
}

func validateGenTypes(opts genTypesOptions) error {
	if opts.gen.Lang == "" {
		var langs []string
		for _, l := range gentypes.Langs() {
			langs = append(langs, string(l))
		}
		return usageError("ork gen types: --lang is required: %s", strings.Join(langs, ", "))
	}
	if err := opts.gen.Validate(); err != nil {
		return usageError("ork gen types: %v", err)
	}
	return nil
}

func runGenTypes(env *Env, opts genTypesOptions) error {
	set, err := loadValidKatalog(env, opts.files)
	if err != nil {
		return err
	}
	src, err := gentypes.Generate(set, opts.gen)
	if err != nil {
		return fmt.Errorf("ork gen types: %w", err)
	}
	if opts.outDir == "" {
		_, err = env.Streams.Out.Write(src)
		return err
	}
	if err := os.MkdirAll(opts.outDir, 0o755); err != nil {
		return fmt.Errorf("ork gen types: %w", err)
	}
	path := filepath.Join(opts.outDir, gentypes.FileName(opts.gen.Lang))
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return fmt.Errorf("ork gen types: %w", err)
	}
	_, err = fmt.Fprintf(env.Streams.Out, "wrote %s\n", path)
	return err
}
