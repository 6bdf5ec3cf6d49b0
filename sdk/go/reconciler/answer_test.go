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
		{"pending", Pending("db-1", 30*time.Second), `{"result":"pending","operation":{"id":"db-1","pollAfter":"30s"}}`},
		{"pending at ork's pace", Pending("db-1", 0), `{"result":"pending","operation":{"id":"db-1"}}`},
		{"pending with a deadline and progress", Pending("db-1", 0).WithDeadline(30*time.Minute).WithProgress(40, "creating").WithStatus(map[string]any{"phase": "Provisioning"}),
			`{"result":"pending","status":{"phase":"Provisioning"},"operation":{"id":"db-1","deadline":"30m0s","message":"creating","progress":40}}`},
		{"progress at 0 is said", Pending("db-1", 0).WithProgress(0, ""), `{"result":"pending","operation":{"id":"db-1","progress":0}}`},
		{"deadline and progress need pending", OK().WithDeadline(time.Minute).WithProgress(5, "x"), `{"result":"ok"}`},
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
		{"unknown result", Result{Result: "done"}, `result: "done" is not ok, requeue, pending or error`},
		{"pending without an operation", Result{Result: ResultKindPending}, "operation: result pending needs an operation"},
		{"an operation with ok", Result{Result: ResultKindOK, Operation: &PendingOperation{ID: "x"}}, `operation: goes only with result pending, not "ok"`},
		{"pending without an id", Pending("", 0), "operation.id is required"},
		{"an id too long", Pending(strings.Repeat("x", 257), 0), "operation.id is longer than 256 characters"},
		{"progress over 100", Pending("x", 0).WithProgress(101, ""), "operation.progress: 101 is not from 0 to 100"},
		{"bad pollAfter", Result{Result: ResultKindPending, Operation: &PendingOperation{ID: "x", PollAfter: "10"}}, `operation.pollAfter: "10" is not a non-negative duration`},
		{"negative deadline", Pending("x", 0).WithDeadline(-time.Second), `operation.deadline: "-1s" is not a non-negative duration`},
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

func TestOperationKeyIsStableForAGeneration(t *testing.T) {
	obj := Object{Metadata: map[string]any{"uid": "0b5e-uid", "name": "w"}}
	for _, tc := range []struct {
		name string
		req  PreparedRequest
		want string
	}{
		{"no operation held: derived from uid and generation", PreparedRequest{Object: obj, Prepared: Prepared{Generation: 3}}, "0b5e-uid/3"},
		{"an operation held: its key", PreparedRequest{Object: obj, Prepared: Prepared{Generation: 3, Operation: &HeldOperation{ID: "db-1", Key: "0b5e-uid/3/db-1", Generation: 3}}}, "0b5e-uid/3/db-1"},
		{"a superseded operation: the new generation's", PreparedRequest{Object: obj, Prepared: Prepared{Generation: 4, Operation: &HeldOperation{ID: "db-1", Key: "0b5e-uid/3/db-1", Generation: 3, Superseded: true}}}, "0b5e-uid/4"},
	} {
		if got := tc.req.OperationKey(); got != tc.want {
			t.Errorf("%s: OperationKey = %q, want %q", tc.name, got, tc.want)
		}
	}
}
