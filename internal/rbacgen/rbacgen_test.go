package rbacgen

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	goldenfile "github.com/orkspace/ork/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/katalog"
)

// golden compares got with testdata/<name>, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Assert(t, filepath.Join("testdata", name), got)
}

func load(t *testing.T, files ...string) *katalog.Set {
	t.Helper()
	set, findings, err := katalog.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	if katalog.HasErrors(findings) {
		t.Fatalf("katalog has errors: %v", findings)
	}
	return set
}

const remoteExample = "../../examples/remote/katalog.yaml"

func TestGenerateMatchesGolden(t *testing.T) {
	tests := []struct {
		golden string
		files  []string
		opts   Options
	}{
		{"remote.golden.yaml", []string{remoteExample}, Options{}},
		{"remote-leader-elect.golden.yaml", []string{remoteExample}, Options{LeaderElect: true, Name: "webapp-operator", Namespace: "ops"}},
		{"remote-install-crds.golden.yaml", []string{remoteExample}, Options{InstallCRDs: true}},
		{"remote-shard-buckets.golden.yaml", []string{remoteExample}, Options{ShardBuckets: 4, Name: "webapp-operator", Namespace: "ops"}},
		{"secrets.golden.yaml", []string{"testdata/secrets.katalog.yaml"}, Options{}},
		{"shared-group.golden.yaml", []string{"testdata/shared-group.katalog.yaml"}, Options{}},
		{"website.golden.yaml", []string{"../../examples/website/katalog.yaml"}, Options{}},
		{"custom.golden.yaml", []string{"testdata/custom.katalog.yaml"}, Options{}},
		{"related.golden.yaml", []string{"testdata/related.katalog.yaml"}, Options{}},
		{"related-watch-namespaces.golden.yaml", []string{"testdata/related.katalog.yaml"}, Options{WatchNamespaces: []string{"team-a", "shared"}}},
		{"two-files.golden.yaml", []string{remoteExample, "../../examples/website/katalog.yaml"}, Options{}},
		{"remote-watch-namespaces.golden.yaml", []string{remoteExample}, Options{LeaderElect: true, InstallCRDs: true,
			Namespace: "ops", LeaseName: "webapp-leader", WatchNamespaces: []string{"team-b", "team-a", "team-b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			res, err := Generate(load(t, tt.files...), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := res.YAML("v0.0.0-test")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range res.Warnings {
				got = append(got, []byte("# warning: "+w+"\n")...)
			}
			golden(t, tt.golden, got)
		})
	}
}

func TestJSONIsAV1List(t *testing.T) {
	res, err := Generate(load(t, remoteExample), Options{LeaderElect: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "remote.golden.json", got)
}

func TestOutputIsByteIdenticalAcrossRuns(t *testing.T) {
	set := load(t, "testdata/custom.katalog.yaml", "testdata/secrets.katalog.yaml", "testdata/shared-group.katalog.yaml")
	var first []byte
	// Map iteration order is random per run, so repeated runs catch any unsorted map walk.
	for i := range 50 {
		res, err := Generate(set, Options{LeaderElect: true, InstallCRDs: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := res.YAML("dev")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = got
		} else if !bytes.Equal(first, got) {
			t.Fatalf("run %d differs from run 0:\n%s", i, cmp.Diff(string(first), string(got)))
		}
	}
}

func TestPermissionsScopeSecretsByName(t *testing.T) {
	perms := Permissions(load(t, "testdata/secrets.katalog.yaml"), Options{})
	var secrets []Permission
	for _, p := range perms {
		if p.Resource == "secrets" {
			secrets = append(secrets, p)
		}
	}
	// The static ones name no namespace: ork's own, in a Role there.
	want := []Permission{
		{Verb: "get", Resource: "secrets"},
		{Verb: "get", Resource: "secrets", Name: "b-ca", Namespace: DefaultNamespace},
		{Verb: "get", Resource: "secrets", Name: "token-a", Namespace: DefaultNamespace},
		{Verb: "get", Resource: "secrets", Name: "token-b", Namespace: DefaultNamespace},
	}
	if diff := cmp.Diff(want, secrets); diff != "" {
		t.Errorf("secret permissions (-want +got):\n%s", diff)
	}
}

func TestPermissionsFollowOptions(t *testing.T) {
	set := load(t, remoteExample)
	lease := Permission{Verb: "create", Group: "coordination.k8s.io", Resource: "leases", Namespace: DefaultNamespace}
	crdCreate := Permission{Verb: "create", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "webapps.myorg.io"}
	crdGet := Permission{Verb: "get", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "webapps.myorg.io"}
	ssar := Permission{Verb: "create", Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}
	callbackKey := Permission{Verb: "get", Resource: "secrets", Name: "op-callback", Namespace: DefaultNamespace}
	tests := []struct {
		name    string
		opts    Options
		has     []Permission
		hasNone []Permission
	}{
		{"defaults", Options{}, []Permission{ssar}, []Permission{lease, crdCreate, crdGet, callbackKey}},
		{"operation callback", Options{OperationCallbackSecret: "op-callback"}, []Permission{callbackKey}, []Permission{lease}},
		{"leader election", Options{LeaderElect: true}, []Permission{lease}, []Permission{crdCreate, crdGet}},
		{"crd install", Options{InstallCRDs: true}, []Permission{crdCreate, crdGet}, []Permission{lease}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perms := Permissions(set, tt.opts)
			for _, p := range tt.has {
				if !slices.Contains(perms, p) {
					t.Errorf("missing %+v", p)
				}
			}
			for _, p := range tt.hasNone {
				if slices.Contains(perms, p) {
					t.Errorf("unexpected %+v", p)
				}
			}
		})
	}
}

func TestRulesGrantExactlyThePermissions(t *testing.T) {
	set := load(t, "testdata/custom.katalog.yaml", "testdata/secrets.katalog.yaml", "testdata/shared-group.katalog.yaml")
	perms := Permissions(set, Options{LeaderElect: true, InstallCRDs: true})
	// Expanding the merged rules of each namespace back must give the same set: merging
	// neither lost nor widened anything.
	byNamespace := map[string][]Permission{}
	for _, p := range perms {
		byNamespace[p.Namespace] = append(byNamespace[p.Namespace], p)
	}
	var back []Permission
	for ns, ps := range byNamespace {
		for _, r := range Rules(ps) {
			for _, res := range r.Resources {
				resource, sub, _ := strings.Cut(res, "/")
				names := r.ResourceNames
				if len(names) == 0 {
					names = []string{""}
				}
				for _, n := range names {
					for _, v := range r.Verbs {
						back = append(back, Permission{Verb: v, Group: r.APIGroups[0], Resource: resource, Subresource: sub, Name: n, Namespace: ns})
					}
				}
			}
		}
	}
	slices.SortFunc(back, comparePermissions)
	if diff := cmp.Diff(perms, back); diff != "" {
		t.Errorf("rules expand to a different set (-permissions +rules):\n%s", diff)
	}
}

func TestGenerateRejectsBadNames(t *testing.T) {
	for _, opts := range []Options{{Name: "Not_Valid"}, {Namespace: "a.b"}, {LeaseName: "No"}, {WatchNamespaces: []string{"ok", "a.b"}}} {
		if _, err := Generate(&katalog.Set{}, opts); err == nil {
			t.Errorf("Generate(%+v): want an error", opts)
		}
	}
}
