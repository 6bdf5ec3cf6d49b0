package wireschema

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/remote"
	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/schema"
)

// Each case is judged twice, by the schema and by ork itself, and both must agree with want:
// the schema promises no more and no less than ork accepts. Out of the schema's reach, and
// so not listed: the contents of values (base64 in a secret's data, a quantity's syntax, a
// full object's spec against the Kubernetes API types).
func TestResultSchemaAgreesWithOrk(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		name string
		body string
		want bool
	}{
		{"empty object is ok with nothing to do", `{}`, true},
		{"the seed's example", `{"result":"ok","requeueAfter":"","error":"","status":{"phase":"Ready"},"resources":[
			{"type":"deployment","fields":{"name":"my-webapp","image":"nginx:latest","replicas":2,"port":8080}},
			{"type":"service","fields":{"name":"my-webapp-svc","port":80,"targetPort":8080}}]}`, true},
		{"every field null", `{"result":null,"requeueAfter":null,"error":null,"status":null,"resources":null}`, true},
		{"requeue with a delay", `{"result":"requeue","requeueAfter":"1m30s"}`, true},
		{"ok with a fractional delay", `{"result":"ok","requeueAfter":"1.5h"}`, true},
		{"requeueAfter in microseconds", `{"requeueAfter":"250µs"}`, true},
		{"requeueAfter zero", `{"requeueAfter":"0"}`, true},
		{"error with text", `{"result":"error","error":"spec.image is required"}`, true},
		{"error without text is still an answer", `{"result":"error"}`, true},
		{"forceConflict false", `{"resources":[{"type":"service","fields":{"name":"s","port":80},"forceConflict":false}]}`, true},
		{"forceConflict as a string ork coerces", `{"resources":[{"type":"service","fields":{"name":"s","port":80},"forceConflict":"true"}]}`, true},
		{"replicas as a string ork coerces", `{"resources":[{"type":"deployment","fields":{"name":"d","image":"i","replicas":"2"}}]}`, true},
		{"named targetPort", `{"resources":[{"type":"service","fields":{"name":"s","port":80,"targetPort":"http","type":"NodePort"}}]}`, true},
		{"configmap values written out", `{"resources":[{"type":"configmap","fields":{"name":"c","data":{"n":1,"b":true,"s":"x"}}}]}`, true},
		{"secret with stringData", `{"resources":[{"type":"secret","fields":{"name":"s","stringData":{"k":"v"}}}]}`, true},
		{"custom type", `{"resources":[{"type":"custom","fields":{"apiVersion":"myorg.io/v1","kind":"Database","name":"db","spec":{"size":"small"}}}]}`, true},
		{"workload with resources", `{"resources":[{"type":"statefulset","fields":{"name":"s","image":"i",
			"resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"memory":"128Mi"}},"env":{"A":"1"},"command":["run",8080]}}]}`, true},
		{"cronjob", `{"resources":[{"type":"cronjob","fields":{"name":"c","image":"i","schedule":"*/5 * * * *","suspend":false}}]}`, true},
		{"ingress", `{"resources":[{"type":"ingress","fields":{"name":"i","serviceName":"s","servicePort":80,"pathType":"Exact"}}]}`, true},
		{"pvc", `{"resources":[{"type":"persistentvolumeclaim","fields":{"name":"p","storage":"1Gi","accessModes":["ReadWriteMany"]}}]}`, true},
		{"full object", `{"resources":[{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"a":"b"}},
			"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}]}`, true},
		{"full Secret with its own top-level type", `{"resources":[{"apiVersion":"v1","kind":"Secret","type":"Opaque","metadata":{"name":"s"},"stringData":{"k":"v"}}]}`, true},
		{"full object of any kind", `{"resources":[{"apiVersion":"myorg.io/v1","kind":"Database","metadata":{"name":"db"},"spec":{}}]}`, true},

		{"pending with an operation", `{"result":"pending","operation":{"id":"db-1","pollAfter":"10s","deadline":"30m","message":"creating","progress":40},"status":{"phase":"Provisioning"}}`, true},
		{"pending with only an id", `{"result":"pending","operation":{"id":"db-1"}}`, true},
		{"pending with resources", `{"result":"pending","operation":{"id":"db-1","progress":100},"resources":[{"type":"service","fields":{"name":"s","port":80}}]}`, true},
		{"operation fields null", `{"result":"pending","operation":{"id":"db-1","pollAfter":null,"deadline":"","message":null,"progress":null}}`, true},
		{"pollAfter under a second is raised, not refused", `{"result":"pending","operation":{"id":"db-1","pollAfter":"100ms"}}`, true},
		{"a null operation with ok", `{"result":"ok","operation":null}`, true},

		{"pending without an operation", `{"result":"pending"}`, false},
		{"pending with a null operation", `{"result":"pending","operation":null}`, false},
		{"operation without an id", `{"result":"pending","operation":{"pollAfter":"5s"}}`, false},
		{"operation with an empty id", `{"result":"pending","operation":{"id":""}}`, false},
		{"operation id too long", `{"result":"pending","operation":{"id":"` + strings.Repeat("é", 257) + `"}}`, false},
		{"operation id not a string", `{"result":"pending","operation":{"id":1}}`, false},
		{"pollAfter without a unit", `{"result":"pending","operation":{"id":"x","pollAfter":"10"}}`, false},
		{"negative deadline", `{"result":"pending","operation":{"id":"x","deadline":"-5m"}}`, false},
		{"progress over 100", `{"result":"pending","operation":{"id":"x","progress":101}}`, false},
		{"negative progress", `{"result":"pending","operation":{"id":"x","progress":-1}}`, false},
		{"fractional progress", `{"result":"pending","operation":{"id":"x","progress":0.5}}`, false},
		{"unknown operation field", `{"result":"pending","operation":{"id":"x","eta":"5m"}}`, false},
		{"operation with ok", `{"result":"ok","operation":{"id":"x"}}`, false},
		{"operation without a result", `{"operation":{"id":"x"}}`, false},
		{"operation not an object", `{"result":"pending","operation":"x"}`, false},

		{"unknown field", `{"result":"ok","requeue":"5s"}`, false},
		{"field names are case-sensitive", `{"Result":"ok"}`, false},
		{"duplicate field", `{"result":"ok","result":"error"}`, false},
		{"unknown result", `{"result":"done"}`, false},
		{"result not a string", `{"result":true}`, false},
		{"requeueAfter without a unit", `{"result":"requeue","requeueAfter":"30"}`, false},
		{"negative requeueAfter", `{"result":"requeue","requeueAfter":"-1s"}`, false},
		{"requeueAfter in words", `{"result":"requeue","requeueAfter":"soon"}`, false},
		{"requeueAfter as a number", `{"requeueAfter":30}`, false},
		{"status not an object", `{"status":"Ready"}`, false},
		{"resources not a list", `{"resources":{"type":"service"}}`, false},
		{"resource not an object", `{"resources":["deployment"]}`, false},
		{"resource in neither form", `{"resources":[{"name":"x","image":"nginx"}]}`, false},
		{"intent without fields", `{"resources":[{"type":"deployment"}]}`, false},
		{"intent with an unknown entry field", `{"resources":[{"type":"service","fields":{"name":"s","port":80},"forceConflicts":true}]}`, false},
		{"intent mixed with the full form", `{"resources":[{"type":"service","fields":{"name":"s","port":80},"kind":"Service"}]}`, false},
		{"unknown intent type", `{"resources":[{"type":"deploymnet","fields":{"name":"d","image":"i"}}]}`, false},
		{"missing required field", `{"resources":[{"type":"deployment","fields":{"name":"d"}}]}`, false},
		{"required field empty", `{"resources":[{"type":"deployment","fields":{"name":"","image":"i"}}]}`, false},
		{"required field null", `{"resources":[{"type":"service","fields":{"name":"s","port":null}}]}`, false},
		{"unknown field in fields", `{"resources":[{"type":"deployment","fields":{"name":"d","imagee":"i"}}]}`, false},
		{"replicas not a number", `{"resources":[{"type":"deployment","fields":{"name":"d","image":"i","replicas":"two"}}]}`, false},
		{"forceConflict not a boolean", `{"resources":[{"type":"service","fields":{"name":"s","port":80},"forceConflict":"yes"}]}`, false},
		{"unknown resource name", `{"resources":[{"type":"deployment","fields":{"name":"d","image":"i","resources":{"requests":{"gpu":"1"}}}}]}`, false},
		{"labels not strings", `{"resources":[{"type":"configmap","fields":{"name":"c","data":{},"labels":{"a":{"b":1}}}}]}`, false},
		{"unknown service type", `{"resources":[{"type":"service","fields":{"name":"s","port":80,"type":"Internal"}}]}`, false},
		{"unknown access mode", `{"resources":[{"type":"persistentvolumeclaim","fields":{"name":"p","storage":"1Gi","accessModes":["RWO"]}}]}`, false},
		{"secret without data or stringData", `{"resources":[{"type":"secret","fields":{"name":"s"}}]}`, false},
		{"custom without kind", `{"resources":[{"type":"custom","fields":{"apiVersion":"myorg.io/v1","name":"db"}}]}`, false},
		{"full object without metadata.name", `{"resources":[{"apiVersion":"apps/v1","kind":"Deployment","metadata":{}}]}`, false},
		{"full object with empty apiVersion", `{"resources":[{"apiVersion":"","kind":"Deployment","metadata":{"name":"d"}}]}`, false},
		{"full object with a fields key", `{"resources":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"fields":{}}]}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schemaErr := v.ValidateResult([]byte(tt.body))
			if got := schemaErr == nil; got != tt.want {
				t.Errorf("schema: valid=%v, want %v (%v)", got, tt.want, schemaErr)
			}
			orkErr := orkVerdict(t, tt.body)
			if got := orkErr == nil; got != tt.want {
				t.Errorf("ork: accepts=%v, want %v (%v)", got, tt.want, orkErr)
			}
		})
	}
}

// orkVerdict runs body through ork itself: a real remote.Reconciler calls a loopback
// endpoint that answers body, then resources.Build checks each entry, as the engine does
// before applying. A result "error" is a well-formed answer that reports a failure.
func orkVerdict(t *testing.T, body string) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	crd := &katalog.CRD{
		Name:     "webapp",
		APITypes: &katalog.APITypes{Group: "myorg.io", Version: "v1", Kind: "WebApp", Plural: "webapps"},
		OperatorBox: katalog.OperatorBox{Reconcile: katalog.Reconcile{
			Remote: &katalog.Remote{Endpoint: srv.URL + "/reconcile"},
		}},
	}
	r, err := remote.New(crd, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "myorg.io/v1", "kind": "WebApp",
		"metadata": map[string]any{"name": "w", "namespace": "default"}}
	res, err := r.Reconcile(t.Context(), remote.Request{Key: "default/w", Object: obj, Trigger: remote.TriggerCreate, Attempt: 1})
	var ce *remote.CallError
	if errors.As(err, &ce) && ce.Kind == remote.KindErrorResult {
		return nil
	}
	if err != nil {
		return err
	}
	for i, raw := range res.Resources {
		if _, err := resources.Build(raw, resources.OptionsFor("default", "w")); err != nil {
			return resources.AtEntry(err, fmt.Sprintf("resources[%d]", i))
		}
	}
	return nil
}

// The intent types and their fields are ork's resources table; the schema must list the
// same, or editors would offer fields ork rejects.
func TestIntentSchemaMatchesTheResourcesTable(t *testing.T) {
	defs := decodeSchema(t, schema.RemoteReconcileResult())["$defs"].(map[string]any)
	intent := defs["intent"].(map[string]any)
	enum := stringList(intent["properties"].(map[string]any)["type"].(map[string]any)["enum"])
	var names []string
	for _, ti := range resources.Types() {
		names = append(names, ti.Type)
	}
	if d := cmp.Diff(names, enum); d != "" {
		t.Errorf("intent type enum (-resources.Types +schema):\n%s", d)
	}
	if got := len(intent["allOf"].([]any)); got != len(names) {
		t.Errorf("intent allOf has %d type conditions, want one per type (%d)", got, len(names))
	}
	for _, ti := range resources.Types() {
		def, ok := defs[ti.Type+"Fields"].(map[string]any)
		if !ok {
			t.Errorf("no $defs/%sFields", ti.Type)
			continue
		}
		required, optional := ti.Fields()
		if d := cmp.Diff(required, stringList(def["required"])); d != "" {
			t.Errorf("%s required (-resources +schema):\n%s", ti.Type, d)
		}
		allowed := slices.Concat(required, optional)
		if d := cmp.Diff(allowed, stringList(def["propertyNames"].(map[string]any)["enum"])); d != "" {
			t.Errorf("%s fields (-resources +schema):\n%s", ti.Type, d)
		}
		props := def["properties"].(map[string]any)
		for _, f := range allowed {
			if _, ok := props[f]; !ok {
				t.Errorf("%s field %s has no description in the schema", ti.Type, f)
			}
		}
	}
}

func stringList(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}
