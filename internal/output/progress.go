package output

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Progress shows long steps (waiting for caches, for a CRD to be Established): a spinner
// on a terminal, one timestamped line per event when piped, so logs stay greppable.
type Progress struct {
	w     io.Writer
	tty   bool
	style Style
	now   func() time.Time
	// frame is the spinner's redraw interval.
	frame time.Duration
	mu    sync.Mutex
}

// NewProgress writes to w; tty selects the spinner. now is the clock (time.Now in
// production, fixed in tests).
func NewProgress(w io.Writer, tty bool, style Style, now func() time.Time) *Progress {
	return &Progress{w: w, tty: tty, style: style, now: now, frame: 100 * time.Millisecond}
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Start begins a step; the returned func ends it with its error (nil for success).
func (p *Progress) Start(step string) func(err error) {
	start := p.now()
	if !p.tty {
		p.line("%s ...", step)
		return func(err error) {
			if err != nil {
				p.line("%s: failed: %v", step, err)
				return
			}
			p.line("%s: done (%s)", step, p.now().Sub(start).Round(time.Millisecond))
		}
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(p.frame)
		defer t.Stop()
		for i := 0; ; i++ {
			p.draw("\r%s %s", p.style.Dim(spinnerFrames[i%len(spinnerFrames)]), step)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			close(stop)
			<-stopped
			took := p.now().Sub(start).Round(time.Millisecond)
			if err != nil {
				p.draw("\r%s %s: %v\n", p.style.Error("✗"), step, err)
				return
			}
			p.draw("\r%s %s %s\n", p.style.OK("✓"), step, p.style.Dim("("+took.String()+")"))
		})
	}
}

func (p *Progress) line(format string, a ...any) {
	p.draw("[%s] %s\n", p.now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func (p *Progress) draw(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, a...)
}
