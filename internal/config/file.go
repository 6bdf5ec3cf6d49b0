package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// File is a settings file as written: the global settings at the top, each command's under
// its name, a subcommand's under its parent's:
//
//	log-level: debug
//	run:
//	  namespace: ops
//	rbac:
//	  gen:
//	    namespace: ops
type File struct {
	Path string
	Tree map[string]any
}

// DefaultPath is $XDG_CONFIG_HOME/ork/config.yaml ($XDG_CONFIG_HOME defaults to ~/.config)
// when that is a file, else "": ork reads no settings file it was not pointed at, and never
// one in the working directory, where a Katalog may lie.
func DefaultPath(getenv func(string) string) string {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	p := filepath.Join(base, "ork", "config.yaml")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return p
	}
	return ""
}

// ReadFile reads a settings file; it must exist, be a YAML mapping, and not be a Kubernetes
// manifest (a Katalog passed as --config is named as such).
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if u := errors.Unwrap(err); u != nil {
			err = u
		}
		return nil, fmt.Errorf("settings file %s: %w", path, err)
	}
	var tree map[string]any
	if err := yaml.UnmarshalStrict(data, &tree); err != nil {
		return nil, fmt.Errorf("settings file %s: not a YAML mapping of settings: %w", path, err)
	}
	if kind, ok := tree["kind"].(string); ok {
		if _, manifest := tree["apiVersion"]; manifest {
			what := "a Kubernetes manifest (kind: " + kind + ")"
			if kind == "Katalog" {
				what = "a Katalog"
			}
			return nil, fmt.Errorf("settings file %s is %s, not ork's settings: pass a Katalog with -f, and settings as flag names (docs/cli.md)", path, what)
		}
	}
	return &File{Path: path, Tree: tree}, nil
}
