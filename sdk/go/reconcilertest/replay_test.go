package reconcilertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// handler answers like the recording, with replicas taken from the spec plus bump; it
// records whether each request it saw was a dry run.
func handler(bump int, dryRuns *[]bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var req struct {
			Object struct {
				Spec struct{ Replicas int } `json:"spec"`
			} `json:"object"`
			Prepared struct {
				DryRun bool `json:"dryRun"`
			} `json:"prepared"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		*dryRuns = append(*dryRuns, req.Prepared.DryRun)
		fmt.Fprintf(w, `{"result":"ok","status":{"phase":"Ready"},"resources":[{"type":"deployment","fields":{"name":"web","image":"nginx","replicas":%d}}]}`,
			req.Object.Spec.Replicas+bump)
	})
}

func TestReplay(t *testing.T) {
	for _, tc := range []struct {
		name          string
		bump          int
		opts          Options
		wantExchanges int
		wantCompared  int
		wantPaths     []string
		wantStatus    int
	}{
		{"same logic", 0, Options{Token: "t"}, 2, 1, []string{}, 200},
		{"changed logic", 1, Options{Token: "t"}, 2, 1, []string{"objects[apps/v1 Deployment default/web].fields.replicas"}, 200},
		{"deletes included", 0, Options{Token: "t", IncludeDelete: true}, 3, 2, []string{}, 200},
		{"wrong token", 0, Options{Token: "x"}, 2, 0, []string{}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dryRuns []bool
			rep, err := Replay(handler(tc.bump, &dryRuns), "testdata/recording", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Exchanges != tc.wantExchanges || rep.Compared != tc.wantCompared {
				t.Errorf("exchanges %d compared %d, want %d and %d", rep.Exchanges, rep.Compared, tc.wantExchanges, tc.wantCompared)
			}
			first := rep.Results[0]
			if first.Status != tc.wantStatus || !slices.Equal(first.Divergences, tc.wantPaths) {
				t.Errorf("create: status %d divergences %q, want %d and %q", first.Status, first.Divergences, tc.wantStatus, tc.wantPaths)
			}
			if slices.Contains(dryRuns, false) {
				t.Errorf("a request without prepared.dryRun: %v", dryRuns)
			}
		})
	}
}

// fakeT collects AssertReplay's failures.
type fakeT struct {
	testing.TB
	errors []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func TestAssertReplayNamesTheFieldPath(t *testing.T) {
	var dryRuns []bool
	f := &fakeT{TB: t}
	AssertReplay(f, handler(0, &dryRuns), "testdata/recording", Options{Token: "t"})
	if len(f.errors) != 0 {
		t.Errorf("same logic: %q", f.errors)
	}
	f = &fakeT{TB: t}
	AssertReplay(f, handler(1, &dryRuns), "testdata/recording", Options{Token: "t"})
	if len(f.errors) != 1 || !strings.Contains(f.errors[0], "000001-default_web-create.json") ||
		!strings.Contains(f.errors[0], "objects[apps/v1 Deployment default/web].fields.replicas") {
		t.Errorf("changed logic: %q", f.errors)
	}
}

func TestLoadRejectsWhatIsNoRecording(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no recorded exchange") {
		t.Errorf("empty directory: %v", err)
	}
}
