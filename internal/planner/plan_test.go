package planner

import (
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/resources"
)

func crIn(namespace string) *unstructured.Unstructured {
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp",
		"metadata": map[string]any{"name": "my-webapp", "uid": "cr-uid"}}}
	cr.SetNamespace(namespace)
	return cr
}

// clusterScoped are the kinds testPlanner maps as cluster-scoped.
var clusterScoped = map[string]bool{"Namespace": true}

func testPlanner() Planner {
	return Planner{
		Map: func(gvk schema.GroupVersionKind) (Mapping, error) {
			switch gvk.Kind {
			case "Gadget":
				return Mapping{}, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
			case "Flaky":
				return Mapping{}, errors.New("the server is currently unable to handle the request")
			}
			return Mapping{Resource: schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: strings.ToLower(gvk.Kind) + "s"},
				Namespaced: !clusterScoped[gvk.Kind]}, nil
		},
		Declared: func(gr schema.GroupResource) bool { return gr.Resource != "secrets" },
		Operator: "team-a",
		Watched:  []string{"prod", "ops"},
	}
}

func object(kind, namespace string, refs ...metav1.OwnerReference) resources.Object {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetName("x")
	u.SetNamespace(namespace)
	u.SetOwnerReferences(refs)
	return resources.Object{Obj: u}
}

func TestChildPlacesOwnsAndLabels(t *testing.T) {
	controller := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "boss", UID: "b", Controller: ptr.To(true)}
	theirs := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "peer", UID: "p"}
	roundTripped := metav1.OwnerReference{APIVersion: "myorg.io/v1", Kind: "WebApp", Name: "my-webapp", UID: "cr-uid", Controller: ptr.To(true)}
	tests := []struct {
		name      string
		cr        *unstructured.Unstructured
		obj       resources.Object
		namespace string
		// refs are the owner references' names, "my-webapp" being ork's controller reference.
		refs   []string
		marked bool
		err    string
	}{
		{name: "namespaced, in the CR's namespace", cr: crIn("prod"), obj: object("ConfigMap", ""), namespace: "prod", refs: []string{"my-webapp"}},
		{name: "namespaced, in another watched namespace", cr: crIn("prod"), obj: object("ConfigMap", "ops"), namespace: "ops", marked: true},
		{name: "a cluster-scoped CR owns in any namespace", cr: crIn(""), obj: object("ConfigMap", "ops"), namespace: "ops", refs: []string{"my-webapp"}},
		{name: "cluster-scoped child of a namespaced CR", cr: crIn("prod"), obj: object("Namespace", "prod"), namespace: "", marked: true},
		{name: "the reconciler's own references are kept, ork's own round trip dropped", cr: crIn("prod"),
			obj: object("ConfigMap", "", theirs, roundTripped), namespace: "prod", refs: []string{"peer", "my-webapp"}},
		{name: "a controller reference of the reconciler's", cr: crIn("prod"), obj: object("ConfigMap", "", controller),
			err: `ConfigMap "x": ownerReferences: ConfigMap boss is marked controller: true; ork sets the controller reference (to the custom resource) itself`},
		{name: "an undeclared type", cr: crIn("prod"), obj: object("Secret", ""),
			err: `Secret "x": type secrets is not declared in managedResources (declare it: {group: "", plural: secrets})`},
		{name: "a kind not served", cr: crIn("prod"), obj: object("Gadget", ""),
			err: `Gadget "x": kind not served by the cluster: no matches for kind "Gadget" in version "v1"`},
		{name: "an unwatched namespace", cr: crIn("prod"), obj: object("ConfigMap", "dev"),
			err: `ConfigMap "x": namespace dev is not watched (--watch-namespace prod,ops): ork can neither see nor write a child there`},
		{name: "namespaced child of a cluster-scoped CR naming no namespace", cr: crIn(""), obj: object("ConfigMap", ""),
			err: `ConfigMap "x": namespaced, but the cluster-scoped owner gives no namespace (set one)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.obj.Obj.DeepCopy()
			c, err := testPlanner().Child(tt.cr, tt.obj)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tt.obj.Obj, before) {
				t.Error("the built object was modified: Child plans a copy")
			}
			if got := c.Obj.GetNamespace(); got != tt.namespace {
				t.Errorf("namespace %q, want %q", got, tt.namespace)
			}
			var refs []string
			for _, r := range c.Obj.GetOwnerReferences() {
				refs = append(refs, r.Name)
			}
			if !reflect.DeepEqual(refs, tt.refs) {
				t.Errorf("ownerReferences %v, want %v", refs, tt.refs)
			}
			if ControlledBy(tt.cr, c.Obj) != (len(tt.refs) > 0) {
				t.Errorf("controlled by the CR: %v, want %v", ControlledBy(tt.cr, c.Obj), len(tt.refs) > 0)
			}
			if _, marked := c.Obj.GetAnnotations()[naming.OwnerAnnotation]; marked != tt.marked {
				t.Errorf("%s set: %v, want %v", naming.OwnerAnnotation, marked, tt.marked)
			}
			labels := c.Obj.GetLabels()
			if labels[naming.ManagedByLabel] != naming.ManagedBy || labels[naming.OperatorLabel] != "team-a" {
				t.Errorf("labels %v, want managed-by and operator=team-a", labels)
			}
			// The digest is of the object as written, without the annotation itself.
			if got := c.Obj.GetAnnotations()[naming.AppliedAnnotation]; got != hex.EncodeToString(c.Digest[:]) || got == "" {
				t.Errorf("applied annotation %q, digest %x", got, c.Digest)
			}
			if resources.MarkApplied(c.Obj.DeepCopy()) != c.Digest {
				t.Error("the digest is not that of the planned object")
			}
		})
	}
}

func TestForceConflictEntryThenCRDThenTrue(t *testing.T) {
	tests := []struct {
		name       string
		entry, crd *bool
		want       bool
	}{
		{"default", nil, nil, true},
		{"the CRD's", nil, ptr.To(false), false},
		{"the entry's wins", ptr.To(true), ptr.To(false), true},
	}
	for _, tt := range tests {
		p := testPlanner()
		p.ForceConflict = tt.crd
		o := object("ConfigMap", "")
		o.ForceConflict = tt.entry
		if c, err := p.Child(crIn("prod"), o); err != nil || c.Force != tt.want {
			t.Errorf("%s: force %v (%v), want %v", tt.name, c.Force, err, tt.want)
		}
	}
}

func TestPlanIsAllOrNothingAndVerdict(t *testing.T) {
	tests := []struct {
		name            string
		apply, onCreate []resources.Object
		children        int
		reason, message string
	}{
		{name: "all placed", apply: []resources.Object{object("ConfigMap", "")}, onCreate: []resources.Object{object("Service", "")}, children: 2},
		{name: "an undeclared type alone", apply: []resources.Object{object("ConfigMap", ""), object("Secret", "")},
			reason: ReasonApplyFailed, message: `nothing applied: resources[1]: Secret "x": type secrets is not declared in managedResources (declare it: {group: "", plural: secrets})`},
		{name: "a kind not served is ApplyFailed too", apply: []resources.Object{object("Secret", ""), object("Gadget", "")},
			reason: ReasonApplyFailed, message: `nothing applied: resources[0]: Secret "x": type secrets is not declared in managedResources (declare it: {group: "", plural: secrets}); resources[1]: Gadget "x": kind not served by the cluster: no matches for kind "Gadget" in version "v1"`},
		{name: "a kind not served alone is ApplyFailed", apply: []resources.Object{object("ConfigMap", ""), object("Gadget", "")},
			reason: ReasonApplyFailed, message: `nothing applied: resources[1]: Gadget "x": kind not served by the cluster: no matches for kind "Gadget" in version "v1"`},
		{name: "a discovery failure is ApplyFailed, not said to be unserved", apply: []resources.Object{object("Flaky", "")},
			reason: ReasonApplyFailed, message: `nothing applied: resources[0]: Flaky "x": kind not resolved, discovery failed: the server is currently unable to handle the request`},
		{name: "an unplaceable entry makes every refusal InvalidResource", apply: []resources.Object{object("Secret", "")}, onCreate: []resources.Object{object("ConfigMap", "dev")},
			reason: ReasonInvalidResource, message: `nothing applied: resources[0]: Secret "x": type secrets is not declared in managedResources (declare it: {group: "", plural: secrets}); onCreate[0]: ConfigMap "x": namespace dev is not watched (--watch-namespace prod,ops): ork can neither see nor write a child there`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			children, errs := testPlanner().Plan(crIn("prod"), tt.apply, tt.onCreate)
			if len(children) != tt.children {
				t.Errorf("%d children, want %d", len(children), tt.children)
			}
			f := Verdict(errs)
			switch {
			case tt.reason == "" && f != nil:
				t.Errorf("verdict %v, want none", f)
			case tt.reason != "" && (f == nil || f.Reason != tt.reason || f.Message != tt.message):
				t.Errorf("verdict %+v\nwant %s: %s", f, tt.reason, tt.message)
			}
			for i, c := range children {
				if want := i >= len(tt.apply); c.CreateOnly != want {
					t.Errorf("child %d createOnly %v, want %v", i, c.CreateOnly, want)
				}
			}
		})
	}
}

func TestJudgeOwnership(t *testing.T) {
	cr := crIn("prod")
	live := func(labels map[string]string, refs ...metav1.OwnerReference) metav1.Object {
		return &metav1.ObjectMeta{Name: "x", Labels: labels, OwnerReferences: refs}
	}
	ctl := func(apiVersion, kind, name, uid string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: k8stypes.UID(uid), Controller: ptr.To(true)}
	}
	tests := []struct {
		name   string
		live   metav1.Object
		reason string // "" = ork may write it
	}{
		{"absent", nil, ""},
		{"controlled by the CR", live(nil, ctl("myorg.io/v1", "WebApp", "my-webapp", "cr-uid")), ""},
		{"an orphan", live(nil), ""},
		{"an earlier incarnation of the CR", live(nil, ctl("myorg.io/v2", "WebApp", "my-webapp", "old-uid")), ""},
		{"another CR of the kind", live(nil, ctl("myorg.io/v1", "WebApp", "other", "o")), ReasonAlreadyOwned},
		{"another kind of the name", live(nil, ctl("apps/v1", "Deployment", "my-webapp", "d")), ReasonAlreadyOwned},
		{"this operator's", live(map[string]string{naming.OperatorLabel: "team-a"}), ""},
		{"no operator label (an older ork)", live(map[string]string{naming.ManagedByLabel: naming.ManagedBy}), ""},
		{"another operator's", live(map[string]string{naming.OperatorLabel: "team-b"}), ReasonOperatorConflict},
		{"another owner wins over another operator", live(map[string]string{naming.OperatorLabel: "team-b"}, ctl("v1", "ConfigMap", "c", "c")), ReasonAlreadyOwned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Judge(cr, tt.live, "configmaps", "team-a")
			switch {
			case tt.reason == "" && f != nil:
				t.Errorf("refused: %v", f)
			case tt.reason != "" && (f == nil || f.Reason != tt.reason):
				t.Errorf("judged %v, want %s", f, tt.reason)
			case f != nil && !strings.HasPrefix(f.Message, "nothing applied: configmaps x "):
				t.Errorf("message %q does not name the child", f.Message)
			}
		})
	}
}
