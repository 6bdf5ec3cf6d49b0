package apitypes

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// A kind discovery does not know refreshes it, at most once per interval: a reconciler
// answering with a mistyped kind on every call must not re-read every API group each time.
func TestAnUnknownKindRefreshesDiscoveryOncePerInterval(t *testing.T) {
	d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	d.Resources = []*metav1.APIResourceList{{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
		{Name: "deployments", Kind: "Deployment", Namespaced: true},
	}}}
	a := New(d, time.Hour)
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	if m, err := a.Mapping(deployment); err != nil || m.Resource.Resource != "deployments" {
		t.Fatalf("Mapping(Deployment) = %v, %v", m, err)
	}
	reads := len(d.Actions())
	missing := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Missing"}
	if _, err := a.Mapping(missing); err == nil {
		t.Fatal("an unknown kind mapped")
	}
	afterFirst := len(d.Actions())
	if afterFirst == reads {
		t.Fatal("the first miss did not refresh discovery")
	}
	if _, err := a.Mapping(missing); err == nil {
		t.Fatal("an unknown kind mapped")
	}
	if _, err := a.Mapping(deployment); err != nil {
		t.Fatal(err)
	}
	if n := len(d.Actions()); n != afterFirst {
		t.Errorf("%d discovery reads after a second miss within the interval, want none", n-afterFirst)
	}
}
