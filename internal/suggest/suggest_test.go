package suggest

import "testing"

func TestNearest(t *testing.T) {
	known := []string{"jobs", "managedResources", "endpoint", "protocol", "timeout", "args", "payload", "auth", "tls"}
	tests := []struct {
		name, want string
	}{
		{"managedResource", "managedResources"},
		{"endpont", "endpoint"},
		{"Timeout", "timeout"},
		{"zzzzzzzz", ""},
		{"pods", ""},
		{"tiemout", "timeout"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Nearest(tt.name, known); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := Nearest("x", nil); got != "" {
		t.Errorf("Nearest with no candidates = %q, want empty", got)
	}
}
