package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// workflowStep is a step of a GitHub Actions job.
type workflowStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

// The release workflow runs GoReleaser, at the version the config is checked with, on a
// tag vX.Y.Z, with the history it needs, the Go of go.mod, the rights to publish the release
// and push the image, and a login to the image's registry.
func TestReleaseWorkflowRunsGoReleaserOnATag(t *testing.T) {
	// YAML 1.2 (yaml/v3): under YAML 1.1 a bare `on` key would read as true.
	var wf struct {
		Name string `yaml:"name"`
		On   struct {
			Push struct {
				Tags     []string `yaml:"tags"`
				Branches []string `yaml:"branches"`
			} `yaml:"push"`
		} `yaml:"on"`
		Permissions map[string]string `yaml:"permissions"`
		Jobs        map[string]struct {
			RunsOn  string         `yaml:"runs-on"`
			Timeout int            `yaml:"timeout-minutes"`
			Steps   []workflowStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	data, err := os.ReadFile("../../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true) // a misspelt key is an error, not a silently ignored setting
	if err := dec.Decode(&wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	if !slices.Equal(wf.On.Push.Tags, []string{"v*"}) || len(wf.On.Push.Branches) != 0 {
		t.Errorf("on.push: tags %q branches %q, want tags [v*] only", wf.On.Push.Tags, wf.On.Push.Branches)
	}
	if wf.Permissions["contents"] != "write" || wf.Permissions["packages"] != "write" {
		t.Errorf("permissions %v: want contents and packages write (the release, the image)", wf.Permissions)
	}
	job, ok := wf.Jobs["release"]
	if !ok || len(wf.Jobs) != 1 {
		t.Fatalf("want one job, release; got %d jobs", len(wf.Jobs))
	}
	if job.RunsOn == "" || job.Timeout == 0 {
		t.Errorf("job release: runs-on %q, timeout-minutes %d: want both", job.RunsOn, job.Timeout)
	}
	step := func(action string) workflowStep {
		t.Helper()
		for _, s := range job.Steps {
			if strings.HasPrefix(s.Uses, action+"@") {
				return s
			}
		}
		t.Fatalf("no step uses %s", action)
		return workflowStep{}
	}
	if s := step("actions/checkout"); s.With["fetch-depth"] != "0" {
		t.Errorf("checkout fetch-depth %q, want 0: GoReleaser reads the tags and history", s.With["fetch-depth"])
	}
	if s := step("actions/setup-go"); s.With["go-version-file"] != "go.mod" {
		t.Errorf("setup-go go-version-file %q, want go.mod", s.With["go-version-file"])
	}
	if s := step("docker/login-action"); s.With["registry"] != "ghcr.io" || !strings.Contains(s.With["password"], "secrets.GITHUB_TOKEN") {
		t.Errorf("login %v: want ghcr.io with the job's token (ko pushes there)", s.With)
	}
	gr := step("goreleaser/goreleaser-action")
	if gr.With["args"] != "release --clean" || gr.With["distribution"] != "goreleaser" {
		t.Errorf("goreleaser step with %v: want goreleaser release --clean", gr.With)
	}
	if !strings.Contains(gr.Env["GITHUB_TOKEN"], "secrets.GITHUB_TOKEN") {
		t.Errorf("goreleaser step env %v: want GITHUB_TOKEN", gr.Env)
	}
	gomod, err := os.ReadFile("../../hack/goreleaser-tools/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	pinned := regexp.MustCompile(`(?m)^\s*github\.com/goreleaser/goreleaser/v2 (v\S+)`).FindSubmatch(gomod)
	if pinned == nil || gr.With["version"] != string(pinned[1]) {
		t.Errorf("the workflow runs goreleaser %q, hack/goreleaser-tools pins %q: the release must run the goreleaser its config is checked with", gr.With["version"], pinned)
	}
}

// `ork version` and the image tag agree: the binaries and the image are one build, stamped
// with {{ .Version }}, and the image is tagged {{ .Version }} (ork bundle's default image,
// TestReleaseImageIsTheBundlesDefault), with ko's SBOM.
func TestReleaseStampsTheImageTagsVersion(t *testing.T) {
	var rel struct {
		Builds []struct {
			ID      string   `json:"id"`
			Ldflags []string `json:"ldflags"`
		} `json:"builds"`
		Kos []struct {
			Build string `json:"build"`
			SBOM  string `json:"sbom"`
		} `json:"kos"`
		Snapshot struct {
			VersionTemplate string `json:"version_template"`
		} `json:"snapshot"`
	}
	readYAML(t, "../../.goreleaser.yaml", &rel)
	if len(rel.Builds) == 0 || len(rel.Kos) == 0 {
		t.Fatal("want builds and kos in .goreleaser.yaml")
	}
	ld := strings.Join(rel.Builds[0].Ldflags, " ")
	for _, v := range []string{"Version={{.Version}}", "Commit={{.Commit}}", "Date={{.Date}}"} {
		if !strings.Contains(ld, "-X github.com/orkspace/ork/internal/version."+v) {
			t.Errorf("build ldflags %q lack -X .../internal/version.%s", ld, v)
		}
	}
	if rel.Kos[0].SBOM != "spdx" {
		t.Errorf("kos sbom %q, want spdx", rel.Kos[0].SBOM)
	}
	if !strings.Contains(rel.Snapshot.VersionTemplate, "-snapshot.") {
		t.Errorf("snapshot version_template %q: want a pre-release version (hack/goreleaser-check.sh checks its default image)", rel.Snapshot.VersionTemplate)
	}
}
