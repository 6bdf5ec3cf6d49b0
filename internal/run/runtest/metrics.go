package runtest

import (
	"testing"

	"github.com/orkspace/ork/internal/run"
)

// CounterSum sums a counter's series whose label has value.
func CounterSum(t testing.TB, m *run.Metrics, name, label, value string) float64 {
	t.Helper()
	return seriesSum(t, m, name, label, value, false)
}

// HistogramCount sums the observations of a histogram's series whose label has value.
func HistogramCount(t testing.TB, m *run.Metrics, name, label, value string) uint64 {
	t.Helper()
	return uint64(seriesSum(t, m, name, label, value, true))
}

// seriesSum sums the counter values, or with histogram the observation counts, of the
// series of name whose label has value.
func seriesSum(t testing.TB, m *run.Metrics, name, label, value string, histogram bool) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, metric := range fam.GetMetric() {
			for _, lp := range metric.GetLabel() {
				switch {
				case lp.GetName() != label || lp.GetValue() != value:
				case histogram:
					n += float64(metric.GetHistogram().GetSampleCount())
				default:
					n += metric.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}
