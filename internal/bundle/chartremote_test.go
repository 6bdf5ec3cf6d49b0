package bundle_test

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// timeouts.<crd> and authSecrets.<crd> become ork run's --endpoint-timeout and
// --auth-secret, and an auth Secret gets a Role granting get on it by name, in its
// namespace (the release's by default), bound to ork's ServiceAccount. By default the
// chart passes neither and adds no Role.
func TestChartTimeoutAndAuthSecretValues(t *testing.T) {
	bin := helmBin(t)
	dir := chartDir(t)
	authRoles := func(r []*rbacv1.Role) (out []rbacv1.Role) {
		for _, role := range r {
			if strings.HasSuffix(role.Name, "-auth-webapp") {
				out = append(out, *role)
			}
		}
		return out
	}
	def := helm(t, bin, "template", "rel", dir, "--namespace", "ops")
	if strings.Contains(def, "--endpoint-timeout") || strings.Contains(def, "--auth-secret") || strings.Contains(def, "-auth-webapp") {
		t.Errorf("the default values pass a timeout or an auth Secret:\n%s", def)
	}
	for _, tt := range []struct {
		name     string
		set      []string
		wantArgs []string
		wantNS   string
	}{
		{"a timeout", []string{`timeouts={"webapp":"1m30s"}`}, []string{"--endpoint-timeout=webapp=1m30s"}, ""},
		{"an auth Secret in the release's namespace", []string{`authSecrets={"webapp":{"name":"web-token","key":"token"}}`},
			[]string{"--auth-secret=webapp=ops/web-token:token"}, "ops"},
		{"an auth Secret elsewhere, and a timeout", []string{`authSecrets={"webapp":{"namespace":"secrets","name":"web-token","key":"t.k"}}`, `timeouts={"webapp":"5s"}`},
			[]string{"--endpoint-timeout=webapp=5s", "--auth-secret=webapp=secrets/web-token:t.k"}, "secrets"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"template", "rel", dir, "--namespace", "ops"}
			for _, s := range tt.set {
				args = append(args, "--set-json", s)
			}
			var roles []*rbacv1.Role
			var bindings []*rbacv1.RoleBinding
			var cargs []string
			for _, o := range parseObjects(t, []byte(helm(t, bin, args...))) {
				switch o.GetKind() {
				case "Role":
					var r rbacv1.Role
					toTyped(t, o, &r)
					roles = append(roles, &r)
				case "RoleBinding":
					var b rbacv1.RoleBinding
					toTyped(t, o, &b)
					bindings = append(bindings, &b)
				case "Deployment":
					c, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					for _, a := range c[0].(map[string]any)["args"].([]any) {
						cargs = append(cargs, a.(string))
					}
				}
			}
			for _, want := range tt.wantArgs {
				if !slices.Contains(cargs, want) {
					t.Errorf("args lack %s: %q", want, cargs)
				}
			}
			got := authRoles(roles)
			if tt.wantNS == "" {
				if len(got) != 0 {
					t.Errorf("a Role for an auth Secret nobody set: %+v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Namespace != tt.wantNS || len(got[0].Rules) != 1 {
				t.Fatalf("auth Secret Roles: %+v, want one in %s", got, tt.wantNS)
			}
			want := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"web-token"}, Verbs: []string{"get"}}
			if r := got[0].Rules[0]; !slices.Equal(r.APIGroups, want.APIGroups) || !slices.Equal(r.Resources, want.Resources) ||
				!slices.Equal(r.ResourceNames, want.ResourceNames) || !slices.Equal(r.Verbs, want.Verbs) {
				t.Errorf("the Role's rule: %+v, want %+v", r, want)
			}
			bound := false
			for _, b := range bindings {
				if b.Name == got[0].Name && b.Namespace == tt.wantNS && b.RoleRef.Name == got[0].Name && b.RoleRef.Kind == "Role" &&
					len(b.Subjects) == 1 && b.Subjects[0].Kind == "ServiceAccount" && b.Subjects[0].Name == "rel-web-operator" && b.Subjects[0].Namespace == "ops" {
					bound = true
				}
			}
			if !bound {
				t.Errorf("no RoleBinding binds %s/%s to ork's ServiceAccount: %+v", tt.wantNS, got[0].Name, bindings)
			}
		})
	}
}

// The schema allows timeouts and authSecrets for the Katalog's remote CRDs only, a timeout
// that is a positive Go duration, and an auth Secret with a name and a key.
func TestChartRefusesWrongRemoteValues(t *testing.T) {
	bin := helmBin(t)
	dir := chartDir(t)
	for _, tt := range []struct{ name, set, want string }{
		{"a timeout for a CRD the Katalog has not", `timeouts={"other":"5s"}`, "other"},
		{"a timeout that is no duration", `timeouts={"webapp":"5"}`, "webapp"},
		{"a zero timeout", `timeouts={"webapp":"0s"}`, "webapp"},
		{"a negative timeout", `timeouts={"webapp":"-5s"}`, "webapp"},
		{"an auth Secret for a CRD the Katalog has not", `authSecrets={"other":{"name":"t","key":"k"}}`, "other"},
		{"an auth Secret without a key", `authSecrets={"webapp":{"name":"t"}}`, "key"},
		{"an auth Secret name that is no Secret name", `authSecrets={"webapp":{"name":"Web_Token","key":"k"}}`, "name"},
		{"an auth Secret with a field the chart does not know", `authSecrets={"webapp":{"name":"t","key":"k","header":"X"}}`, "header"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tryHelm(t, bin, "template", "rel", dir, "--namespace", "ops", "--set-json", tt.set)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("helm template: %v, want an error naming %q", err, tt.want)
			}
		})
	}
	if _, err := tryHelm(t, bin, "template", "rel", dir, "--namespace", "ops", "--set-json", `timeouts={"webapp":"1.5s"}`); err != nil {
		t.Errorf("timeouts.webapp=1.5s: %v", err)
	}
}

// NOTES.txt names the Secret of authSecrets.<crd> in place of the Katalog's.
func TestChartNotesNameTheValuesAuthSecret(t *testing.T) {
	bin := helmBin(t)
	out := helm(t, bin, "install", "rel", chartDir(t), "--namespace", "ops", "--dry-run=client",
		"--set-json", `authSecrets={"webapp":{"namespace":"sec","name":"web-token","key":"tok"}}`)
	if _, notes, _ := strings.Cut(out, "NOTES:"); !strings.Contains(notes, "kubectl -n sec create secret generic web-token --from-literal=tok=<token>") ||
		strings.Contains(notes, "my-reconciler-token") {
		t.Errorf("NOTES do not name the values' Secret alone:\n%s", notes)
	}
}
