package reconciler

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAnswersEncodeAsOrkReadsThem(t *testing.T) {
	replicas := int64(0)
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"ok", OK(), `{"result":"ok"}`},
		{"requeue after", Requeue(30 * time.Second), `{"result":"requeue","requeueAfter":"30s"}`},
		{"requeue with backoff", Requeue(0), `{"result":"requeue"}`},
		{"error", Error(errors.New("spec.image is required")), `{"result":"error","error":"spec.image is required"}`},
		{"errorf", Errorf("no %s", "image"), `{"result":"error","error":"no image"}`},
		{"ok and again later", OK().RequeueAfterAlso(time.Minute), `{"result":"ok","requeueAfter":"1m0s"}`},
		{"no resources is no opinion", OK().WithStatus(map[string]any{"phase": "Ready"}), `{"result":"ok","status":{"phase":"Ready"}}`},
		{"empty resources prunes", OK().WithResources(), `{"result":"ok","resources":[]}`},
		{"zero replicas is said", OK().WithResources(Deployment(DeploymentFields{Name: "w", Image: "i", Replicas: &replicas})),
			`{"result":"ok","resources":[{"type":"deployment","fields":{"name":"w","image":"i","replicas":0}}]}`},
		{"port by name and force", OK().WithResources(Service(ServiceFields{Name: "s", Port: 80, TargetPort: Str("http")}).WithForceConflict(false)),
			`{"result":"ok","resources":[{"type":"service","fields":{"name":"s","port":80,"targetPort":"http"},"forceConflict":false}]}`},
		{"full object", OK().WithResources(FullObject(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}})),
			`{"result":"ok","resources":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.res)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("\n got %s\nwant %s", got, tc.want)
			}
			if err := tc.res.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

func TestValidateNamesWhatOrkWouldRefuse(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"unknown result", Result{Result: "done"}, `result: "done" is not ok, requeue or error`},
		{"bad duration", Result{RequeueAfter: "soon"}, `requeueAfter: "soon" is not a non-negative duration`},
		{"negative duration", Result{RequeueAfter: "-1s"}, `requeueAfter: "-1s"`},
		{"required string", OK().WithResources(ConfigMap(ConfigMapFields{Name: "c"})), "resources[0]: configmap: fields.data is required"},
		{"required port", OK().WithResources(Ingress(IngressFields{Name: "i", ServiceName: "s"})), "resources[0]: ingress: fields.servicePort is required"},
		{"one of two", OK().WithResources(ServiceAccount(ServiceAccountFields{Name: "a"}), Secret(SecretFields{Name: "s"})), "resources[1]: secret: set fields.data or fields.stringData"},
		{"custom kind", OK().WithResources(Custom(CustomFields{APIVersion: "x/v1", Name: "n"})), "resources[0]: custom: fields.kind is required"},
		{"empty entry", OK().WithResources(Resource{}), "resources[0]: empty resource"},
		{"full object without name", OK().WithResources(FullObject(map[string]any{"apiVersion": "v1", "kind": "ConfigMap"})), "resources[0]: full object without"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.res.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestResourcesDecodeInTheirForm(t *testing.T) {
	body := `{"resources":[{"type":"deployment","fields":{"name":"w","replicas":2},"forceConflict":true},` +
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}]}`
	var res Result
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	in := res.Resources[0].Intent
	if in == nil || in.Type != IntentTypeDeployment || in.Fields.(map[string]any)["name"] != "w" || in.ForceConflict == nil || !*in.ForceConflict {
		t.Errorf("intent entry: %+v", in)
	}
	if obj := res.Resources[1].Object; obj == nil || obj["kind"] != "Service" || res.Resources[1].Intent != nil {
		t.Errorf("full object entry: %+v", res.Resources[1])
	}
	again, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resources":[{"type":"deployment","fields":{"name":"w","replicas":2},"forceConflict":true},{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}}]}`
	if string(again) != want {
		t.Errorf("round trip\n got %s\nwant %s", again, want)
	}
}

func TestIntOrString(t *testing.T) {
	for _, tc := range []struct {
		json string
		want IntOrString
	}{
		{`8080`, Int(8080)},
		{`"http"`, Str("http")},
		{`null`, IntOrString{}},
	} {
		var v IntOrString
		if err := json.Unmarshal([]byte(tc.json), &v); err != nil {
			t.Fatal(err)
		}
		if v != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.json, v, tc.want)
		}
	}
	if Int(0).IsZero() || !(IntOrString{}).IsZero() || Int(80).String() != "80" || Str("http").String() != "http" {
		t.Error("IsZero or String")
	}
}
