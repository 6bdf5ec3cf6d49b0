package apiresources_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	goldenfile "github.com/orkspace/ork/internal/golden"

	"github.com/orkspace/ork/internal/apiresources"
	"github.com/orkspace/ork/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }

// builtin.json is the pinned kube-apiserver's discovery, every resource of every served
// version but subresources; go test -update rewrites it from the running apiserver.
func TestBuiltinIsTheApiserversDiscovery(t *testing.T) {
	e := env.Require(t)
	groups, lists, err := e.Clientset.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	// The versions of each group in the server's order of preference.
	rank := map[string]int{}
	for _, g := range groups {
		for i, v := range g.Versions {
			rank[g.Name+"/"+v.Version] = i
		}
	}
	index := map[string]int{} // group/plural -> position in table.Resources
	table := apiresources.Table{Kubernetes: testenv.K8sVersion}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue // a subresource
			}
			key := gv.Group + "/" + r.Name
			if i, ok := index[key]; ok {
				table.Resources[i].Versions = append(table.Resources[i].Versions, gv.Version)
				continue
			}
			index[key] = len(table.Resources)
			table.Resources = append(table.Resources, apiresources.Resource{Group: gv.Group, Versions: []string{gv.Version},
				Plural: r.Name, Kind: r.Kind, Namespaced: r.Namespaced})
		}
	}
	for i := range table.Resources {
		r := &table.Resources[i]
		slices.SortFunc(r.Versions, func(a, b string) int { return rank[r.Group+"/"+a] - rank[r.Group+"/"+b] })
	}
	table.Sort()
	got, err := json.MarshalIndent(table, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Assert(t, "builtin.json", append(got, '\n'))
}
