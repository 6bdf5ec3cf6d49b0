package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/orkspace/ork/internal/naming"
)

// NotAChartError is WriteChart's refusal to write into a directory that holds something
// other than a chart ork generated.
type NotAChartError struct{ Dir string }

func (e *NotAChartError) Error() string {
	return fmt.Sprintf("%s is not empty and holds no chart ork bundle --helm wrote: pick a new or empty directory", e.Dir)
}

// WriteChart writes the chart into dir and returns the paths written, sorted. dir must be
// new, empty, or a chart ork generated before: that one is replaced whole, so a CRD or a
// file the Katalog no longer has does not linger in it.
func WriteChart(dir string, files map[string][]byte) ([]string, error) {
	if err := replaceable(dir); err != nil {
		return nil, err
	}
	for _, sub := range []string{"crds", "files", "templates", "Chart.yaml", "values.yaml", "values.schema.json"} {
		if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
			return nil, fmt.Errorf("replace chart: %w", err)
		}
	}
	var written []string
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, fmt.Errorf("write chart: %w", err)
		}
		if err := os.WriteFile(full, content, 0o644); err != nil {
			return nil, fmt.Errorf("write chart: %w", err)
		}
		written = append(written, full)
	}
	slices.Sort(written)
	return written, nil
}

// replaceable checks that dir is missing, empty, or a chart ork generated.
func replaceable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("chart directory: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return &NotAChartError{Dir: dir}
	}
	var chart struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := sigsyaml.Unmarshal(data, &chart); err != nil || (chart.Annotations[naming.GeneratedAnnotation] == "" && chart.Annotations[naming.LegacyGeneratedAnnotation] == "") {
		return &NotAChartError{Dir: dir}
	}
	return nil
}
