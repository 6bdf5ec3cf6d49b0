package apiresources_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/apiresources"
)

func TestBuiltinKnowsTheCommonTypes(t *testing.T) {
	b := apiresources.Builtin()
	if got := b.Release(); got != "Kubernetes 1.37" {
		t.Errorf("Release() = %q, want Kubernetes 1.37", got)
	}
	for _, want := range []apiresources.Resource{
		{Group: "apps", Versions: []string{"v1"}, Plural: "deployments", Kind: "Deployment", Namespaced: true},
		{Group: "", Versions: []string{"v1"}, Plural: "services", Kind: "Service", Namespaced: true},
		{Group: "", Versions: []string{"v1"}, Plural: "namespaces", Kind: "Namespace", Namespaced: false},
		{Group: "networking.k8s.io", Versions: []string{"v1"}, Plural: "ingresses", Kind: "Ingress", Namespaced: true},
	} {
		got, ok := b.Lookup(want.Group, want.Plural)
		if d := cmp.Diff(want, got); !ok || d != "" {
			t.Errorf("Lookup(%q, %q) (-want +got), found %v:\n%s", want.Group, want.Plural, ok, d)
		}
	}
	if _, ok := b.Lookup("apps", "deploymnets"); ok {
		t.Error("Lookup found a misspelt plural")
	}
	if !b.HasGroup("") || !b.HasGroup("batch") || b.HasGroup("app") {
		t.Error("HasGroup: want the core group and batch, not app")
	}
	if d := cmp.Diff([]string{"apps"}, b.GroupsOf("deployments")); d != "" {
		t.Errorf("GroupsOf(deployments) (-want +got):\n%s", d)
	}
	if r, ok := b.LookupKind("batch", "CronJob"); !ok || r.Plural != "cronjobs" {
		t.Errorf("LookupKind(batch, CronJob) = %+v, %v", r, ok)
	}
	if d := cmp.Diff([]string{"apps"}, b.GroupsOfKind("StatefulSet")); d != "" {
		t.Errorf("GroupsOfKind(StatefulSet) (-want +got):\n%s", d)
	}
	if ks := b.Kinds("apps"); !slices.Contains(ks, "Deployment") || slices.Contains(ks, "Service") {
		t.Errorf("Kinds(apps) = %v", ks)
	}
}

// kubectl aligns its columns under the headers; SHORTNAMES is often empty.
func TestParseKubectl(t *testing.T) {
	out := `NAME          SHORTNAMES   APIVERSION             NAMESPACED   KIND         VERBS                        CATEGORIES
configmaps    cm           v1                     true         ConfigMap    create,delete,get,list       
widgets                    example.com/v1alpha1   true         Widget       get,list,watch               all
clusterthings              example.com/v1         false        ClusterThing get,list
`
	got, err := apiresources.ParseKubectl(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := &apiresources.Table{Resources: []apiresources.Resource{
		{Group: "", Versions: []string{"v1"}, Plural: "configmaps", Kind: "ConfigMap", Namespaced: true},
		{Group: "example.com", Versions: []string{"v1"}, Plural: "clusterthings", Kind: "ClusterThing", Namespaced: false},
		{Group: "example.com", Versions: []string{"v1alpha1"}, Plural: "widgets", Kind: "Widget", Namespaced: true},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
	for _, bad := range []string{"", "NAME KIND\nx X\n", "NAME   APIVERSION   NAMESPACED   KIND\nwidgets\n"} {
		if _, err := apiresources.ParseKubectl(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseKubectl(%q) accepted it", bad)
		}
	}
}
