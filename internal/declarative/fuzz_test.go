package declarative

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/render"
	"github.com/orkspace/ork/internal/resources"
)

// entryAtFault is how every error of the fuzzed deployment begins: the Katalog file, the
// line of the entry or of its template, and the entry's path.
var entryAtFault = regexp.MustCompile(`^k\.yaml:1[3-6]: crds\.app\.operatorBox\.onCreate\.deployments\[0\]`)

// FuzzDesired puts one arbitrary template in a deployment's image and env of a Katalog and
// runs the declarative reconciler as ork run does (one Reconciler, its render cache reused
// across passes): never a panic; a pass gives the same plan or error as the pass before;
// an error names the Katalog file, the line and the entry, and comes with no plan at all
// (never a partial one); a built image is what the template renders.
//
//	go test ./internal/declarative -run '^$' -fuzz FuzzDesired -fuzztime 5m
func FuzzDesired(f *testing.F) {
	for _, s := range []string{
		`{{ .spec.image }}`, `{{ .spec.imag }}`, `{{ .spec.port `, `{{ .spec.replicas }}`, `shop:{{ .spec.nothing }}`,
		`{{ .spec.nothing }}`, `{{ required "image is required" (index .spec "img") }}`, `{{ toJSON .spec }}`, `nginx`, ``,
	} {
		f.Add(s)
	}
	cr := appCR()
	cr["spec"].(map[string]any)["nothing"] = nil
	f.Fuzz(func(t *testing.T, text string) {
		set, findings := katalog.Decode(katalog.Source{Path: "k.yaml", Data: []byte(sections)})
		if katalog.HasErrors(findings) {
			t.Fatal(findings)
		}
		c := set.CRDs[0]
		d := c.OperatorBox.OnCreate["deployments"][0]
		d["image"] = text
		d["env"] = map[string]any{"MODE": text}
		r := New(c)
		p, err := r.Desired(cr, resources.Options{})
		again, err2 := r.Desired(cr, resources.Options{})
		if errString(err) != errString(err2) || !cmp.Equal(planObjects(p), planObjects(again)) {
			t.Fatalf("%q: a second pass differs: %v, then %v", text, err, err2)
		}
		if err != nil {
			if !entryAtFault.MatchString(err.Error()) {
				t.Fatalf("%q: error %q does not name the file, line and entry", text, err)
			}
			if p.CreateIfMissing != nil || p.Apply != nil || p.Delete != nil {
				t.Fatalf("%q: a partial plan with the error %v", text, err)
			}
			return
		}
		want, err := render.Value("image", text, cr)
		if err != nil {
			t.Fatalf("%q: Desired built it, but rendering alone fails: %v", text, err)
		}
		var image any
		for _, o := range p.CreateIfMissing {
			if o.Obj.GetKind() == "Deployment" {
				containers := o.Obj.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
				image = containers[0].(map[string]any)["image"]
			}
		}
		if w, ok := want.(string); ok && image != w { // a number or a boolean the build writes as a string
			t.Fatalf("%q: image %#v, want %#v as the template renders", text, image, want)
		}
		if s, _ := image.(string); strings.Contains(s, "<no value>") && !strings.Contains(text, "<no value>") {
			t.Fatalf("%q: image %q", text, s)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func planObjects(p Plan) [][]map[string]any {
	var out [][]map[string]any
	for _, os := range [][]resources.Object{p.CreateIfMissing, p.Apply, p.Delete} {
		var objs []map[string]any
		for _, o := range os {
			objs = append(objs, o.Obj.Object)
		}
		out = append(out, objs)
	}
	return out
}
