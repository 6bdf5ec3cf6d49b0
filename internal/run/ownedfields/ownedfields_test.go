package ownedfields

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"sigs.k8s.io/yaml"
)

const manager = "ork"

// countingClient counts discovery reads, to prove the converter is cached.
type countingClient struct {
	openapi.ClientWithContext
	paths int
	fail  error
}

func (c *countingClient) PathsWithContext(ctx context.Context) (map[string]openapi.GroupVersionWithContext, error) {
	c.paths++
	if c.fail != nil {
		return nil, c.fail
	}
	return c.ClientWithContext.PathsWithContext(ctx)
}

func newClient() *countingClient {
	return &countingClient{ClientWithContext: openapi.ToClientWithContext(openapitest.NewEmbeddedFileClient())}
}

func object(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web, app.kubernetes.io/managed-by: ork}
  annotations: {ork.dev/applied: abc}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 8080}]
        env: [{name: MODE, value: prod}]
`

// fieldsOf is the managedFields JSON an apply of y would record, as the apiserver writes it.
func fieldsOf(t *testing.T, c *Checker, y string) string {
	t.Helper()
	set, err := c.FieldSet(context.Background(), object(t, y))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := set.ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func applyEntry(apiVersion, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: apiVersion,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

func TestOwns(t *testing.T) {
	c := New(Options{Client: newClient(), Manager: manager})
	full := fieldsOf(t, c, deployment)
	withoutEnv := fieldsOf(t, c, strings.Replace(deployment, "        env: [{name: MODE, value: prod}]\n", "", 1))
	withoutLabel := fieldsOf(t, c, strings.Replace(deployment, "app: web, app.kubernetes.io/managed-by: ork", "app.kubernetes.io/managed-by: ork", 1))
	withoutReplicas := fieldsOf(t, c, strings.Replace(deployment, "  replicas: 2\n", "", 1))
	withMore := fieldsOf(t, c, strings.Replace(deployment, "  replicas: 2\n", "  replicas: 2\n  paused: false\n", 1))
	for _, want := range []string{`"k:{\"name\":\"web\"}"`, `"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}"`, `"f:app.kubernetes.io/managed-by"`} {
		if !strings.Contains(full, want) {
			t.Fatalf("field set %s lacks %s: list items are not keyed as the server keys them", full, want)
		}
	}
	for _, bad := range []string{`"f:apiVersion"`, `"f:kind"`, `"f:namespace"`} {
		if strings.Contains(full, bad) {
			t.Errorf("field set %s has %s, which the server never records", full, bad)
		}
	}

	update := metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(full)}
	other := metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(full)}
	scale := applyEntry("apps/v1", full)
	scale.Subresource = "scale"
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    bool
	}{
		{"its apply, whole", []metav1.ManagedFieldsEntry{applyEntry("apps/v1", full)}, true},
		{"an env item removed", []metav1.ManagedFieldsEntry{applyEntry("apps/v1", withoutEnv)}, false},
		{"a label removed", []metav1.ManagedFieldsEntry{applyEntry("apps/v1", withoutLabel)}, false},
		{"replicas taken (kubectl scale)", []metav1.ManagedFieldsEntry{applyEntry("apps/v1", withoutReplicas)}, false},
		{"a superset", []metav1.ManagedFieldsEntry{applyEntry("apps/v1", withMore)}, true},
		{"its create, before any apply", []metav1.ManagedFieldsEntry{update}, true},
		{"its apply wins over its create", []metav1.ManagedFieldsEntry{update, applyEntry("apps/v1", withoutEnv)}, false},
		{"an apply of another version", []metav1.ManagedFieldsEntry{applyEntry("apps/v1beta1", full)}, false},
		{"another manager's entry only", []metav1.ManagedFieldsEntry{other}, false},
		{"its entry of a subresource only", []metav1.ManagedFieldsEntry{scale}, false},
		{"none", nil, false},
		{"an entry without fields (a summary's marker)", []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Owns(context.Background(), object(t, deployment), tc.entries)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Owns = %v, want %v", got, tc.want)
			}
		})
	}
}

// A core kind and a kind the server does not describe.
func TestOwnsKinds(t *testing.T) {
	c := New(Options{Client: newClient(), Manager: manager})
	cm := `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default}
data: {a: "1", b: "2"}
`
	full := fieldsOf(t, c, cm)
	if got, err := c.Owns(context.Background(), object(t, cm), []metav1.ManagedFieldsEntry{applyEntry("v1", full)}); err != nil || !got {
		t.Errorf("ConfigMap, whole: Owns = %v, %v; want true", got, err)
	}
	oneKey := fieldsOf(t, c, strings.Replace(cm, `a: "1", `, "", 1))
	if got, err := c.Owns(context.Background(), object(t, cm), []metav1.ManagedFieldsEntry{applyEntry("v1", oneKey)}); err != nil || got {
		t.Errorf("ConfigMap, a key removed: Owns = %v, %v; want false", got, err)
	}

	widget := `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`
	got, err := c.Owns(context.Background(), object(t, widget), []metav1.ManagedFieldsEntry{applyEntry("example.com/v1", `{"f:spec":{}}`)})
	if err == nil || got {
		t.Errorf("a kind without a schema: Owns = %v, %v; want false and an error", got, err)
	}
	if _, err := c.Owns(context.Background(), object(t, strings.Replace(cm, "kind: ConfigMap", "kind: Nonesuch", 1)),
		[]metav1.ManagedFieldsEntry{applyEntry("v1", full)}); err == nil || !strings.Contains(err.Error(), "no schema of kind Nonesuch") {
		t.Errorf("an unknown kind of a known group: err = %v", err)
	}
}

// The converter is built once per kind and trusted until the refresh; a failure is
// remembered until the retry, so a broken server costs one read per retry, not per child.
func TestConverterCached(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	client := newClient()
	c := New(Options{Client: client, Manager: manager, Now: func() time.Time { return now }, Refresh: time.Minute, Retry: 10 * time.Second})
	full := fieldsOf(t, c, deployment)
	entries := []metav1.ManagedFieldsEntry{applyEntry("apps/v1", full)}
	for range 5 {
		if ok, err := c.Owns(context.Background(), object(t, deployment), entries); err != nil || !ok {
			t.Fatalf("Owns = %v, %v", ok, err)
		}
	}
	if client.paths != 1 {
		t.Errorf("%d discovery reads for one kind, want 1", client.paths)
	}
	now = now.Add(2 * time.Minute)
	client.fail = errors.New("connection refused")
	if _, err := c.Owns(context.Background(), object(t, deployment), entries); err == nil {
		t.Fatal("a failed refresh answered without an error")
	}
	for range 3 {
		if ok, _ := c.Owns(context.Background(), object(t, deployment), entries); ok {
			t.Fatal("owned while the schema cannot be read")
		}
	}
	if client.paths != 2 {
		t.Errorf("%d discovery reads, want 2: a failure is remembered until the retry", client.paths)
	}
	client.fail = nil
	now = now.Add(11 * time.Second)
	if ok, err := c.Owns(context.Background(), object(t, deployment), entries); err != nil || !ok {
		t.Errorf("after the retry: Owns = %v, %v", ok, err)
	}
	if client.paths != 3 {
		t.Errorf("%d discovery reads, want 3", client.paths)
	}
}

func TestNoClient(t *testing.T) {
	c := New(Options{Manager: manager})
	if ok, err := c.Owns(context.Background(), object(t, deployment), []metav1.ManagedFieldsEntry{applyEntry("apps/v1", `{}`)}); ok || err == nil {
		t.Errorf("Owns without a client = %v, %v", ok, err)
	}
}
