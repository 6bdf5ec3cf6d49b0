// Command imagecheck builds ork's release image with ko, as the kos section of
// .goreleaser.yaml configures it, and checks what ko made: an image per release platform,
// its user (non-root), its entrypoint (ork) and a static ork binary of that platform.
// With -reconciler DIR it does the same for the Go reconciler `ork init --remote go` wrote
// into DIR, onto the runtime base and user of DIR/Dockerfile.
//
// This machine pulls no images, so the base is a stand-in generated here: an empty image
// per platform, put in ko's cache (KOCACHE) under the release base's repository and its
// own digest. What only the release can prove: that the real base exists and pulls, and
// that the image pushes and runs on a node. See hack/image-check.sh.
package main

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

// checkVersion is stamped into the image's ork in place of the release's {{.Version}}.
const checkVersion = "0.0.0-imagecheck"

// goBuild is a GoReleaser build.
type goBuild struct {
	ID      string   `json:"id"`
	Main    string   `json:"main"`
	Env     []string `json:"env"`
	Flags   []string `json:"flags"`
	Ldflags []string `json:"ldflags"`
}

// release is what imagecheck reads of .goreleaser.yaml.
type release struct {
	Builds []goBuild `json:"builds"`
	Kos    []struct {
		ID           string   `json:"id"`
		Build        string   `json:"build"`
		Main         string   `json:"main"`
		BaseImage    string   `json:"base_image"`
		User         string   `json:"user"`
		Repositories []string `json:"repositories"`
		Bare         bool     `json:"bare"`
		Platforms    []string `json:"platforms"`
	} `json:"kos"`
}

func main() {
	repo := flag.String("repo", ".", "the ork repository")
	ko := flag.String("ko", "ko", "the ko binary")
	work := flag.String("work", "", "a scratch directory")
	reconciler := flag.String("reconciler", "", "check the Go reconciler in this directory (ork init --remote go) instead of ork")
	flag.Parse()
	check := func() error { return run(*repo, *ko, *work) }
	if *reconciler != "" {
		check = func() error { return runReconciler(*reconciler, *ko, *work) }
	}
	if err := check(); err != nil {
		fmt.Fprintln(os.Stderr, "image-check:", err)
		os.Exit(1)
	}
}

func run(repo, ko, work string) error {
	data, err := os.ReadFile(filepath.Join(repo, ".goreleaser.yaml"))
	if err != nil {
		return err
	}
	var rel release
	if err := yaml.Unmarshal(data, &rel); err != nil {
		return fmt.Errorf(".goreleaser.yaml: %w", err)
	}
	if len(rel.Kos) != 1 || len(rel.Kos[0].Repositories) == 0 {
		return errors.New(".goreleaser.yaml: want one kos entry with a repository")
	}
	k := rel.Kos[0]
	bi := slices.IndexFunc(rel.Builds, func(b goBuild) bool { return b.ID == k.Build })
	if bi < 0 {
		return fmt.Errorf(".goreleaser.yaml: kos builds %q, which is no build", k.Build)
	}
	build := rel.Builds[bi]

	base, err := standInBase(filepath.Join(work, "kocache", "img"), k.BaseImage, k.Platforms)
	if err != nil {
		return fmt.Errorf("stand-in base: %w", err)
	}
	// GoReleaser templates ko does not know: stamp fixed values in their place.
	stamp := strings.NewReplacer("{{.Version}}", checkVersion, "{{ .Version }}", checkVersion,
		"{{.Commit}}", "imagecheck", "{{ .Commit }}", "imagecheck", "{{.Date}}", "1970-01-01T00:00:00Z", "{{ .Date }}", "1970-01-01T00:00:00Z")
	var ldflags []string
	for _, l := range build.Ldflags {
		ldflags = append(ldflags, stamp.Replace(l))
	}
	koYAML, err := yaml.Marshal(map[string]any{
		"defaultBaseImage": base,
		"builds": []map[string]any{{
			"id": build.ID, "main": k.Main, "env": build.Env, "flags": build.Flags, "ldflags": ldflags,
		}},
	})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, ".ko.yaml"), koYAML, 0o644); err != nil {
		return err
	}
	out, err := koBuild(ko, repo, work, k.Main, k.Repositories[0], k.User, base, k.Platforms, k.Bare)
	if err != nil {
		return err
	}
	return inspect(out, app{name: "ork", user: k.User, runVersion: true}, k.Platforms, work)
}

// koBuild runs ko build of main in dir with the .ko.yaml in work, writing an OCI layout
// (returned) instead of pushing.
func koBuild(ko, dir, work, main, repository, user, base string, platforms []string, bare bool) (string, error) {
	out := filepath.Join(work, "oci")
	if strings.ToLower(out) != out {
		return "", fmt.Errorf("-work %s: ko names the layout by its path, which must be lowercase", work)
	}
	args := []string{"build", main, "--platform=" + strings.Join(platforms, ","), "--image-user=" + user,
		"--push=false", "--oci-layout-path=" + out, "--tags=imagecheck", "--sbom=none"}
	if bare {
		args = append(args, "--bare")
	}
	cmd := exec.Command(ko, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KO_CONFIG_PATH="+work, "KOCACHE="+filepath.Join(work, "kocache"),
		"KO_DOCKER_REPO="+repository, "GOFLAGS=-mod=readonly")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "image-check: ko %s (base %s)\n", strings.Join(args, " "), base)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ko build: %w", err)
	}
	return out, nil
}

// app is what an image must run: /ko-app/name as user; runVersion: the host platform's
// binary is run with `version`, which must print checkVersion.
type app struct {
	name, user string
	runVersion bool
}

// standInBase writes an index of empty images, one per platform, into ko's cache layout
// and returns the reference ko resolves from that cache alone: the release base's
// repository at the index's digest (a digest reference never goes to the registry).
func standInBase(cache, baseImage string, platforms []string) (string, error) {
	ref, err := name.ParseReference(baseImage)
	if err != nil {
		return "", err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var imgs []v1.Image
	for _, p := range platforms {
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			return "", err
		}
		img, err := mutate.ConfigFile(mutate.MediaType(empty.Image, types.OCIManifestSchema1),
			&v1.ConfigFile{OS: plat.OS, Architecture: plat.Architecture, RootFS: v1.RootFS{Type: "layers"}})
		if err != nil {
			return "", err
		}
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		imgs = append(imgs, img)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
	}
	p, err := layout.Write(cache, empty.Index)
	if err != nil {
		return "", err
	}
	// ko looks a digest up among the layout's top-level manifests: the index and each image.
	if err := p.AppendIndex(idx); err != nil {
		return "", err
	}
	for _, img := range imgs {
		if err := p.AppendImage(img); err != nil {
			return "", err
		}
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return ref.Context().Digest(d.String()).String(), nil
}

// inspect checks the image index ko wrote.
func inspect(dir string, a app, platforms []string, work string) error {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return err
	}
	top, err := root.IndexManifest()
	if err != nil {
		return err
	}
	if len(top.Manifests) != 1 || !top.Manifests[0].MediaType.IsIndex() {
		return fmt.Errorf("ko wrote %d manifests, want one multi-platform index", len(top.Manifests))
	}
	idx, err := root.ImageIndex(top.Manifests[0].Digest)
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	var got []string
	for _, desc := range im.Manifests {
		if desc.Platform == nil {
			return fmt.Errorf("manifest %s has no platform", desc.Digest)
		}
		plat := desc.Platform.OS + "/" + desc.Platform.Architecture
		got = append(got, plat)
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return err
		}
		if err := checkImage(img, plat, a, work); err != nil {
			return fmt.Errorf("%s: %w", plat, err)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(platforms))
	if !slices.Equal(got, want) {
		return fmt.Errorf("platforms %v, want %v", got, want)
	}
	fmt.Printf("image-check: ok: %s, user %s, entrypoint /ko-app/%s, a static %s in each\n", strings.Join(got, ", "), a.user, a.name, a.name)
	return nil
}

func checkImage(img v1.Image, plat string, a app, work string) error {
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	if cf.OS+"/"+cf.Architecture != plat {
		return fmt.Errorf("config says %s/%s", cf.OS, cf.Architecture)
	}
	uid, _, _ := strings.Cut(cf.Config.User, ":")
	if cf.Config.User != a.user || uid == "" || uid == "0" || uid == "root" {
		return fmt.Errorf("user %q, want %q and not root", cf.Config.User, a.user)
	}
	entry := "/ko-app/" + a.name
	if !slices.Equal(cf.Config.Entrypoint, []string{entry}) || len(cf.Config.Cmd) != 0 {
		// A Deployment gives only args: the entrypoint must be the program itself.
		return fmt.Errorf("entrypoint %q cmd %q, want [%s] and no cmd", cf.Config.Entrypoint, cf.Config.Cmd, entry)
	}
	bin := filepath.Join(work, strings.ReplaceAll(plat, "/", "-")+"-"+a.name)
	if err := extract(img, strings.TrimPrefix(entry, "/"), bin); err != nil {
		return err
	}
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[cf.Architecture]
	if f.Machine != machine {
		return fmt.Errorf("%s is built for %s", a.name, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return fmt.Errorf("%s is dynamically linked, want static", a.name)
		}
	}
	if a.runVersion && plat == "linux/"+runtime.GOARCH {
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), checkVersion) {
			return fmt.Errorf("ork version from the image: %v: %s", err, out)
		}
	}
	return nil
}

// extract copies the file at path in img's filesystem to dst.
func extract(img v1.Image, path, dst string) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("no %s in the image", path)
		}
		if err != nil {
			return err
		}
		if strings.TrimPrefix(h.Name, "/") != path {
			continue
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, tr); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
}
