package run

import (
	"fmt"
	"time"
)

// Progress shows long start-up steps to a person (the CLI's spinner on a terminal). Start
// begins a step; the returned func ends it with the step's error.
type Progress interface {
	Start(step string) (done func(err error))
}

// step reports a long step through Options.Progress, or as log lines without one.
func (e *Engine) step(format string, a ...any) func(error) {
	msg := fmt.Sprintf(format, a...)
	if e.opts.Progress != nil {
		return e.opts.Progress.Start(msg)
	}
	e.log.Info(msg)
	start := time.Now()
	return func(err error) {
		if err == nil {
			e.log.Info(msg+": done", "took", time.Since(start).Round(time.Millisecond).String())
		}
	}
}
