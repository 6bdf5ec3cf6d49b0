package rbacgen

import (
	"slices"
	"strings"
	"testing"
)

const targetKatalog = "testdata/target.katalog.yaml"

// What a spoke grants: the children of the CRDs that have a target, with the hub's verbs,
// bound to the subject of the flags.
func TestGenerateTargetMatchesGolden(t *testing.T) {
	for _, tt := range []struct {
		golden string
		files  []string
		opts   TargetOptions
	}{
		{"target.golden.yaml", []string{targetKatalog}, TargetOptions{}},
		{"target-user.golden.yaml", []string{targetKatalog}, TargetOptions{Name: "fleet", SubjectKind: SubjectUser, SubjectName: "hub-ork"}},
		{"target-service-account.golden.yaml", []string{targetKatalog}, TargetOptions{Name: "fleet", SubjectNamespace: "ops"}},
		{"target-none.golden.yaml", []string{remoteExample}, TargetOptions{}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			res, err := GenerateTarget(load(t, tt.files...), tt.opts)
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

// The hub keeps what concerns the hub: the kubeconfig Secrets (by name, or every Secret of
// their namespace for a templated name), and no rights on the children of a CRD whose
// children are always in the spoke.
func TestGenerateHubWithTargets(t *testing.T) {
	res, err := Generate(load(t, targetKatalog), Options{})
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
	golden(t, "target-hub.golden.yaml", got)
}

// Least privilege: nothing on a spoke but the children's verbs.
func TestTargetGrantsOnlyChildren(t *testing.T) {
	perms, _ := TargetPermissions(load(t, targetKatalog))
	var got []string
	for _, p := range perms {
		if p.Namespace != "" || p.Name != "" || p.Subresource != "" {
			t.Errorf("%+v: a spoke grants cluster-wide verbs on whole types only", p)
		}
		got = append(got, p.Group+"/"+p.Resource)
	}
	got = slices.Compact(got)
	want := []string{"/configmaps", "/services", "apps/deployments"}
	if !slices.Equal(got, want) {
		t.Errorf("types %v, want %v (no custom resources, CRDs, Leases, Events, Secrets, nor a CRD's without target)", got, want)
	}
	for _, p := range perms {
		if !slices.Contains(manageVerbs, p.Verb) {
			t.Errorf("verb %q is not one the hub has on children", p.Verb)
		}
	}
}

func TestTargetOptionsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		opts TargetOptions
		want string
	}{
		{TargetOptions{SubjectKind: "Robot"}, "target-subject-kind"},
		{TargetOptions{SubjectName: "Not_A_Name"}, "target-subject-name"},
		{TargetOptions{SubjectNamespace: "-x"}, "namespace"},
		{TargetOptions{Name: "x_y"}, "name"},
	} {
		if _, err := GenerateTarget(nil, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want one about %s", tc.opts, err, tc.want)
		}
	}
}
