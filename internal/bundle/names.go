package bundle

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/rbacgen"
)

// released matches a release tag: vX.Y.Z or vX.Y.Z-pre, with or without the v (the release
// build stamps {{.Version}}, without it; `go install ...@vX.Y.Z` reports the module
// version, with it). Not a `git describe` (v1.2.3-4-gabcdef), a Go pseudo-version
// (v0.0.0-20240101120000-abcdef123456, v1.2.4-0.2024...), a dirty build, nor "dev": their
// images were never published. pseudo catches what released alone would let through.
var (
	released = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$`)
	pseudo   = regexp.MustCompile(`(^|[.-])[0-9]{14}-[0-9a-f]{12}$|-[0-9]+-g[0-9a-f]+$|dirty`)
)

// Released reports whether ork version v is a release, whose image the release published.
func Released(v string) bool { return released.MatchString(v) && !pseudo.MatchString(v) }

// DefaultImage is the release image of ork version v (tagged without the v, as the release
// build tags it).
func DefaultImage(v string) string { return ImageRepository + ":" + strings.TrimPrefix(v, "v") }

// NoImageError is Generate's refusal to default the image of an ork that is not a release:
// no such image was ever published.
type NoImageError struct{ Version string }

func (e *NoImageError) Error() string {
	return fmt.Sprintf("ork %s is not a released version, so there is no %s image of it: pass --image with an image of ork you built, "+
		"e.g. KO_DOCKER_REPO=registry.example/ork ko build ./cmd/ork (prints the image to pass; for kind, KO_DOCKER_REPO=kind.local)",
		e.Version, ImageRepository)
}

// maxNameLength leaves room in a 63-character name or label for the suffixes ork derives
// from the operator's name (-metrics, -leader-election, -member-<pod>, -rollout).
const maxNameLength = 40

// CheckName says why name cannot be an operator's name ("" when it can): a DNS-1035 label
// of at most 40 characters (docs/naming.md).
func CheckName(name string) string {
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return strings.Join(errs, "; ")
	}
	if len(name) > maxNameLength {
		return fmt.Sprintf("at most %d characters, not %d", maxNameLength, len(name))
	}
	return ""
}

// DefaultName is the operator's name `ork bundle` and the chart take when none is given
// (docs/naming.md): the Katalog's metadata.name when every file gives the same one and it is a
// valid name (CheckName); otherwise an error saying why, to ask for --name.
func DefaultName(set *katalog.Set) (string, error) {
	names := map[string]bool{}
	var first string
	for _, f := range set.Files {
		n := f.Katalog.Metadata.Name
		if len(names) == 0 {
			first = n
		}
		names[n] = true
	}
	switch {
	case len(names) > 1:
		all := slices.Sorted(maps.Keys(names))
		return "", fmt.Errorf("the Katalogs have different metadata.name (%s)", strings.Join(all, ", "))
	case first == "":
		return "", fmt.Errorf("the Katalog has no metadata.name")
	}
	if why := CheckName(first); why != "" {
		return "", fmt.Errorf("the Katalog's metadata.name %q is not a DNS-1035 label of at most %d characters: %s", first, maxNameLength, why)
	}
	return first, nil
}

// Renamed lists, for an install upgraded from a bundle of ork's old fixed name
// (rbacgen.DefaultName), each object whose name now derives from another Name: "Kind
// namespace/old -> new", the Lease included. Nothing when Name is the old one.
func (b *Bundle) Renamed() []string {
	if b.opts.Name == rbacgen.DefaultName {
		return nil
	}
	var out []string
	add := func(kind, ns, name string) {
		old := strings.Replace(name, b.opts.Name, rbacgen.DefaultName, 1)
		if ns != "" {
			ns += "/"
		}
		out = append(out, fmt.Sprintf("%s %s%s -> %s", kind, ns, old, name))
	}
	for _, o := range b.Objects {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition":
			continue
		}
		if strings.HasPrefix(o.GetName(), b.opts.Name) {
			add(o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}
	add("Lease", b.opts.Namespace, b.opts.Name)
	return out
}
