package resources

import (
	"encoding/json"
	"testing"
)

// FuzzBuild: any entry of a result's resources builds an object or fails with a readable
// error; never a panic.
//
//	go test ./internal/resources -run '^$' -fuzz FuzzBuild -fuzztime 5m
func FuzzBuild(f *testing.F) {
	for _, s := range []string{
		`{"type":"deployment","fields":{"name":"web","image":"nginx","replicas":2,"env":{"A":"b"},"resources":{"limits":{"cpu":"1"}}}}`,
		`{"type":"service","fields":{"name":"s","port":80,"targetPort":"http","type":"NodePort"}}`,
		`{"type":"secret","fields":{"name":"s","data":{"k":"dmFsdWU="}}}`,
		`{"type":"custom","fields":{"apiVersion":"x/v1","kind":"X","name":"x","spec":{"a":[1,2]}}}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","uid":"u","resourceVersion":"1"},"spec":{},"status":{}}`,
		`{"type":"persistentvolumeclaim","fields":{"name":"p","storage":"1Gi","accessModes":["ReadWriteOnce"]}}`,
		`{"type":"cronjob","fields":{"name":"c","image":"i","schedule":"* * * * *"}}`, `{}`, `{"type":7}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw map[string]any
		if json.Unmarshal(data, &raw) != nil || raw == nil {
			return
		}
		o, err := Build(raw, OptionsFor("default", "web"))
		if err != nil {
			if err.Error() == "" {
				t.Error("an error without a message")
			}
			return
		}
		if o.Obj == nil || o.Obj.GetName() == "" {
			t.Errorf("Build(%s) = %+v: an object without a name", data, o)
		}
	})
}
