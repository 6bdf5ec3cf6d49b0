package cli

import "testing"

// The member Lease names its pod as owner only when the pod is surely the one named and in
// ork's namespace: an owner looked up in the wrong namespace looks gone, and the garbage
// collector would delete the live replica's Lease.
func TestMemberUIDOnlyForThePodInOrksNamespace(t *testing.T) {
	full := map[string]string{"POD_UID": "u-1", "POD_NAME": "ork-0", "POD_NAMESPACE": "ops"}
	tests := []struct {
		name  string
		unset string
		ns    string
		want  string
	}{
		{"the pod in ork's namespace", "", "ops", "u-1"},
		{"ork's namespace is another", "", "other", ""},
		{"no POD_UID", "POD_UID", "ops", ""},
		{"no POD_NAME (the member is the hostname)", "POD_NAME", "ops", ""},
		{"no POD_NAMESPACE", "POD_NAMESPACE", "ops", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &Env{Getenv: func(k string) string {
				if k == tt.unset {
					return ""
				}
				return full[k]
			}}
			if got := memberUID(env, tt.ns); string(got) != tt.want {
				t.Errorf("memberUID = %q, want %q", got, tt.want)
			}
		})
	}
}
