package resources

import (
	"errors"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// TestBuildErrors pins the message for each kind of invalid entry, as a caller shows it
// after AtEntry: entry index, type, field, problem.
func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name, entry, want string
	}{
		{"missing required field",
			`{type: deployment, fields: {name: web}}`,
			`resources[1] (deployment): field "image": required`},
		{"required field rendered empty",
			`{type: service, fields: {name: "", port: 80}}`,
			`resources[1] (service): field "name": required, got an empty string`},
		{"wrong type for a number",
			`{type: service, fields: {name: web, port: eighty}}`,
			`resources[1] (service): field "port": expected an integer, got string "eighty"`},
		{"fraction for a number",
			`{type: deployment, fields: {name: web, image: nginx, replicas: 1.5}}`,
			`resources[1] (deployment): field "replicas": expected an integer, got number 1.5`},
		{"list for a string",
			`{type: configmap, fields: {name: [a], data: {}}}`,
			`resources[1] (configmap): field "name": expected a string, got a list`},
		{"wrong type for a boolean",
			`{type: cronjob, fields: {name: b, image: i, schedule: "@daily", suspend: maybe}}`,
			`resources[1] (cronjob): field "suspend": expected true or false, got string "maybe"`},
		{"wrong type inside a map",
			`{type: deployment, fields: {name: web, image: nginx, env: {A: {b: c}}}}`,
			`resources[1] (deployment): field "env.A": expected a string, got a mapping`},
		{"unknown field with a suggestion",
			`{type: deployment, fields: {name: web, image: nginx, replica: 2}}`,
			`resources[1] (deployment): field "replica": unknown field (did you mean "replicas"?)`},
		{"unknown field without a suggestion",
			`{type: serviceaccount, fields: {name: web, zzzzzz: 1}}`,
			`resources[1] (serviceaccount): field "zzzzzz": unknown field (known fields: annotations, labels, name, namespace)`},
		{"replicas is not a daemonset field",
			`{type: daemonset, fields: {name: a, image: i, replicas: 2}}`,
			`resources[1] (daemonset): field "replicas": unknown field (known fields: annotations, args, command, env, image, labels, name, namespace, port, resources)`},
		{"unknown resource key",
			`{type: deployment, fields: {name: web, image: nginx, resources: {limits: {cpus: 1}}}}`,
			`resources[1] (deployment): field "resources.limits.cpus": unknown field (did you mean "cpu"?)`},
		{"bad quantity",
			`{type: persistentvolumeclaim, fields: {name: d, storage: lots}}`,
			`resources[1] (persistentvolumeclaim): field "storage": expected a quantity such as "500m" or "1Gi", got "lots"`},
		{"service type outside the list",
			`{type: service, fields: {name: web, port: 80, type: ExternalName}}`,
			`resources[1] (service): field "type": "ExternalName" is not one of ClusterIP, NodePort, LoadBalancer`},
		{"secret without data",
			`{type: secret, fields: {name: s}}`,
			`resources[1] (secret): field "data": required: set data (base64-encoded values) or stringData (plain text)`},
		{"secret data not base64",
			`{type: secret, fields: {name: s, data: {token: "not base64!"}}}`,
			`resources[1] (secret): field "data.token": not valid base64 (put plain text in stringData)`},
		{"unknown type",
			`{type: deploymnet, fields: {name: web}}`,
			`resources[1]: field "type": unknown type "deploymnet" (did you mean "deployment"?)`},
		{"intent form without fields",
			`{type: service}`,
			`resources[1] (service): field "fields": required`},
		{"unknown envelope key",
			`{type: service, fields: {name: a, port: 1}, forceConflicts: true}`,
			`resources[1] (service): field "forceConflicts": unknown field (did you mean "forceConflict"?)`},
		{"custom without kind",
			`{type: custom, fields: {apiVersion: example.com/v1, name: x}}`,
			`resources[1] (custom): field "kind": required: custom has no kind to infer, so fields must set apiVersion and kind`},
		{"custom without apiVersion",
			`{type: custom, fields: {kind: Widget, name: x}}`,
			`resources[1] (custom): field "apiVersion": required: custom has no kind to infer, so fields must set apiVersion and kind`},
		{"custom spec not a mapping",
			`{type: custom, fields: {apiVersion: example.com/v1, kind: Widget, name: x, spec: [1]}}`,
			`resources[1] (custom): field "spec": expected a mapping, got a list`},
		{"full form without metadata.name",
			`{apiVersion: v1, kind: ConfigMap, metadata: {labels: {a: b}}}`,
			`resources[1] (ConfigMap): field "metadata.name": required`},
		{"full form without kind",
			`{apiVersion: v1, metadata: {name: x}}`,
			`resources[1] (object): field "kind": required`},
		{"full form without apiVersion",
			`{kind: ConfigMap, metadata: {name: x}}`,
			`resources[1] (ConfigMap): field "apiVersion": required`},
		{"full form with a bad apiVersion",
			`{apiVersion: a/b/c, kind: Widget, metadata: {name: x}}`,
			`resources[1] (Widget): field "apiVersion": unexpected GroupVersion string: a/b/c`},
		{"full form of a built-in kind with a misspelt field",
			`{apiVersion: apps/v1, kind: Deployment, metadata: {name: x}, spec: {replica: 2}}`,
			`resources[1] (Deployment): strict decoding error: unknown field "spec.replica"`},
		{"neither form",
			`{name: web, image: nginx}`,
			`resources[1]: neither the intent form (type and fields) nor the full object form (apiVersion, kind and metadata.name)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw map[string]any
			if err := sigsyaml.Unmarshal([]byte(tt.entry), &raw); err != nil {
				t.Fatal(err)
			}
			_, err := Build(raw, testOptions())
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Build error = %v (%T), want a *FieldError", err, err)
			}
			if got := AtEntry(err, "resources[1]").Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestFieldErrorWithoutEntry(t *testing.T) {
	err := &FieldError{Type: "service", Field: "port", Msg: "required"}
	if got, want := err.Error(), `service: field "port": required`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := AtEntry(errors.New("boom"), "resources[0]").Error(), "resources[0]: boom"; got != want {
		t.Errorf("AtEntry(plain error) = %s, want %s", got, want)
	}
}
