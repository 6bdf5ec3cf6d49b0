package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sigs.k8s.io/yaml"
	"strings"
)

// reconcilerPlatforms are the platforms the reconciler's image is checked for: those of
// ork's own release image.
var reconcilerPlatforms = []string{"linux/amd64", "linux/arm64"}

// runReconciler builds the Go reconciler in dir with ko onto a stand-in for the runtime base
// of dir/Dockerfile (its last FROM), as that Dockerfile's user, with its go build flags, and
// checks the image as ork's: a static binary per platform, run as that non-root user.
func runReconciler(dir, ko, work string) error {
	df, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return err
	}
	base, user, err := runtimeStage(df)
	if err != nil {
		return fmt.Errorf("%s/Dockerfile: %w", dir, err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	module := modulePath(gomod)
	if module == "" {
		return fmt.Errorf("%s/go.mod names no module", dir)
	}
	standIn, err := standInBase(filepath.Join(work, "kocache", "img"), base, reconcilerPlatforms)
	if err != nil {
		return fmt.Errorf("stand-in base: %w", err)
	}
	// The Dockerfile's build: static (CGO_ENABLED=0), -trimpath, stripped.
	koYAML, err := yaml.Marshal(map[string]any{
		"defaultBaseImage": standIn,
		"builds": []map[string]any{{
			"id": "reconciler", "main": ".", "env": []string{"CGO_ENABLED=0"},
			"flags": []string{"-trimpath"}, "ldflags": []string{"-s -w"},
		}},
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, ".ko.yaml"), koYAML, 0o644); err != nil {
		return err
	}
	out, err := koBuild(ko, dir, work, ".", "registry.example/"+filepath.Base(module), user, standIn, reconcilerPlatforms, true)
	if err != nil {
		return err
	}
	return inspect(out, app{name: filepath.Base(module), user: user}, reconcilerPlatforms, work)
}

// runtimeStage is the image of df's last FROM and the USER set after it.
func runtimeStage(df []byte) (base, user string, err error) {
	sc := bufio.NewScanner(bytes.NewReader(df))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			base, user = f[1], ""
			if strings.HasPrefix(base, "--platform") && len(f) > 2 {
				base = f[2]
			}
		case "USER":
			user = f[1]
		}
	}
	switch {
	case base == "":
		return "", "", errors.New("no FROM")
	case !strings.Contains(base, "@sha256:"):
		return "", "", fmt.Errorf("runtime base %s is not pinned by digest", base)
	case user == "":
		return "", "", errors.New("no USER in the runtime stage")
	}
	return base, user, sc.Err()
}

// modulePath is the path of go.mod's module line.
func modulePath(gomod []byte) string {
	for _, l := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}
