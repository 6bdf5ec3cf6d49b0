package run

import "github.com/orkspace/ork/internal/run/metrics"

// Metrics are ork's Prometheus metrics, on a registry of their own (run/metrics).
type Metrics = metrics.Metrics

// NewMetrics registers every metric on a fresh registry.
func NewMetrics() *Metrics { return metrics.New() }
