package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/bundle"
)

// action.yml is a composite action that builds this ork and runs hack/action-validate.sh
// (tested by testdata/script/action.txtar) with its inputs; README.md shows how to use it.
func TestActionRunsTheValidateScript(t *testing.T) {
	var action struct {
		Inputs map[string]struct {
			Default string `json:"default"`
		} `json:"inputs"`
		Runs struct {
			Using string `json:"using"`
			Steps []struct {
				Uses  string            `json:"uses"`
				With  map[string]any    `json:"with"`
				Run   string            `json:"run"`
				Shell string            `json:"shell"`
				Env   map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"runs"`
	}
	readYAML(t, "../../action.yml", &action)
	if action.Runs.Using != "composite" || len(action.Runs.Steps) != 3 {
		t.Fatalf("want a composite action of 3 steps (Go, build, validate), got %+v", action.Runs)
	}
	if d := action.Inputs["files"].Default; d != "katalog.yaml" {
		t.Errorf("input files defaults to %q, want katalog.yaml (ork validate's default)", d)
	}
	if _, ok := action.Inputs["sarif"]; !ok {
		t.Error("no input sarif")
	}
	setup, build, validate := action.Runs.Steps[0], action.Runs.Steps[1], action.Runs.Steps[2]
	if !strings.HasPrefix(setup.Uses, "actions/setup-go@") || setup.With["go-version-file"] != "${{ github.action_path }}/go.mod" {
		t.Errorf("step 1 does not set up the Go of ork's go.mod: %+v", setup)
	}
	if !strings.Contains(build.Run, `go build -C "$GITHUB_ACTION_PATH"`) || !strings.Contains(build.Run, "./cmd/ork") ||
		!strings.Contains(build.Run, "$GITHUB_PATH") || build.Shell != "bash" {
		t.Errorf("step 2 does not build this ork onto PATH: %+v", build)
	}
	if validate.Run != `bash "$GITHUB_ACTION_PATH/hack/action-validate.sh"` || validate.Shell != "bash" ||
		validate.Env["KATALOG_FILES"] != "${{ inputs.files }}" || validate.Env["SARIF_FILE"] != "${{ inputs.sarif }}" {
		t.Errorf("step 3 does not run hack/action-validate.sh with the inputs: %+v", validate)
	}
	if _, err := os.Stat("../../hack/action-validate.sh"); err != nil {
		t.Error(err)
	}
}

// .pre-commit-hooks.yaml's hooks run ork validate on the Katalogs listed in args, whenever a
// YAML file changes; README.md names them.
func TestPreCommitHooksRunOrkValidate(t *testing.T) {
	var hooks []struct {
		ID            string `json:"id"`
		Name          string `json:"name"`
		Entry         string `json:"entry"`
		Language      string `json:"language"`
		PassFilenames *bool  `json:"pass_filenames"`
		Files         string `json:"files"`
	}
	readYAML(t, "../../.pre-commit-hooks.yaml", &hooks)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var langs []string
	for _, h := range hooks {
		if h.Entry != "ork validate" || h.PassFilenames == nil || *h.PassFilenames || h.Name == "" {
			t.Errorf("hook %s: want entry ork validate, pass_filenames false and a name, got %+v", h.ID, h)
		}
		re, err := regexp.Compile(h.Files)
		if err != nil || !re.MatchString("deploy/katalog.yaml") || !re.MatchString("crd.yml") || re.MatchString("main.go") {
			t.Errorf("hook %s: files %q should match the YAML files only (%v)", h.ID, h.Files, err)
		}
		if !strings.Contains(string(readme), "id: "+h.ID+"\n") && !strings.Contains(string(readme), "`"+h.ID+"`") {
			t.Errorf("README.md does not show hook %s", h.ID)
		}
		langs = append(langs, h.Language)
	}
	slices.Sort(langs)
	if !slices.Equal(langs, []string{"golang", "system"}) {
		t.Errorf("want a hook that builds ork (golang) and one that uses the installed ork (system), got %v", langs)
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The release image is where ork bundle's default image points, for the platforms a
// cluster runs, non-root, and built with the release binaries' flags (one build, reused).
func TestReleaseImageIsTheBundlesDefault(t *testing.T) {
	var rel struct {
		Builds []struct {
			ID string `json:"id"`
		} `json:"builds"`
		Kos []struct {
			Build        string   `json:"build"`
			BaseImage    string   `json:"base_image"`
			User         string   `json:"user"`
			Repositories []string `json:"repositories"`
			Bare         bool     `json:"bare"`
			Platforms    []string `json:"platforms"`
			Tags         []string `json:"tags"`
		} `json:"kos"`
	}
	readYAML(t, "../../.goreleaser.yaml", &rel)
	if len(rel.Kos) != 1 {
		t.Fatalf("want one image in .goreleaser.yaml kos, got %d", len(rel.Kos))
	}
	k := rel.Kos[0]
	if len(k.Repositories) == 0 || k.Repositories[0] != bundle.ImageRepository || !k.Bare {
		t.Errorf("image repositories %q (bare %v), want %s first and bare: ork bundle defaults to it", k.Repositories, k.Bare, bundle.ImageRepository)
	}
	if !slices.Contains(k.Tags, "{{ .Version }}") {
		t.Errorf("image tags %q lack {{ .Version }}: ork bundle defaults to %s", k.Tags, bundle.DefaultImage("<version>"))
	}
	if !slices.Equal(k.Platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("image platforms %q, want linux/amd64 and linux/arm64", k.Platforms)
	}
	if uid, _, _ := strings.Cut(k.User, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("image user %q: want a non-root uid", k.User)
	}
	if !strings.Contains(k.BaseImage, "distroless/static") {
		t.Errorf("base image %q: want distroless static (no shell, no libc: ork is static)", k.BaseImage)
	}
	if len(rel.Builds) == 0 || k.Build != rel.Builds[0].ID {
		t.Errorf("the image builds %q, want the release build %q", k.Build, rel.Builds[0].ID)
	}
}
