package dotpath

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Path
		wantErr bool
	}{
		{in: "metadata.managedFields", want: Path{"metadata", "managedFields"}},
		{in: `metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`,
			want: Path{"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}},
		{in: "status", want: Path{"status"}},
		{in: "", wantErr: true},
		{in: "metadata..name", wantErr: true},
		{in: ".metadata", wantErr: true},
		{in: "metadata.", wantErr: true},
		{in: "spec.containers[0]", wantErr: true},
		{in: "spec.*", wantErr: true},
		{in: `spec\`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("Parse(%q) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if d := cmp.Diff(tt.want, got); d != "" && !tt.wantErr {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, d)
		}
	}
}
