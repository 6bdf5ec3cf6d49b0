// Package output renders results as text, JSON or YAML; it is the only package that styles
// terminal text.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	sigsyaml "sigs.k8s.io/yaml"
)

// Format is an output format.
type Format string

// Formats that commands accept with -o.
const (
	Text Format = "text"
	JSON Format = "json"
	YAML Format = "yaml"
	// Plan is ork simulate's plan as JSON, for CI assertions.
	Plan Format = "plan"
	// GitHub, SARIF and JUnit are report formats of ork validate for CI systems.
	GitHub Format = "github"
	SARIF  Format = "sarif"
	JUnit  Format = "junit"
)

// ParseFormat checks s against the formats a command supports.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	f := Format(strings.ToLower(s))
	if slices.Contains(allowed, f) {
		return f, nil
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return "", fmt.Errorf("unknown output format %q (want one of: %s)", s, strings.Join(names, ", "))
}

// Streams are a command's standard streams. OutTTY says whether Out is a terminal.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	OutTTY bool
	ErrTTY bool
}

// SystemStreams are the process's own stdin/stdout/stderr.
func SystemStreams() Streams {
	return Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		OutTTY: isTerminal(os.Stdout), ErrTTY: isTerminal(os.Stderr)}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Style colours text, or leaves it plain. Colour is used only on a terminal, with NO_COLOR
// unset and --no-color off.
type Style struct {
	color bool
	r     *lipgloss.Renderer
}

// NewStyle returns a Style writing to w; color false yields plain text.
func NewStyle(w io.Writer, color bool) Style {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return Style{color: color, r: r}
}

// UseColor decides whether to style. Never with --no-color or NO_COLOR; always with
// CLICOLOR_FORCE (not "0"), a pipe included; else on a terminal, unless TERM is dumb or
// CLICOLOR is "0".
func UseColor(tty, noColorFlag bool, getenv func(string) string) bool {
	switch {
	case noColorFlag || getenv("NO_COLOR") != "":
		return false
	case getenv("CLICOLOR_FORCE") != "" && getenv("CLICOLOR_FORCE") != "0":
		return true
	}
	return tty && getenv("TERM") != "dumb" && getenv("CLICOLOR") != "0"
}

func (s Style) paint(fg string, bold bool, text string) string {
	if !s.color {
		return text
	}
	return s.r.NewStyle().Foreground(lipgloss.Color(fg)).Bold(bold).Render(text)
}

// Error styles an error label.
func (s Style) Error(text string) string { return s.paint("9", true, text) }

// Warning styles a warning label.
func (s Style) Warning(text string) string { return s.paint("11", true, text) }

// OK styles a success message.
func (s Style) OK(text string) string { return s.paint("10", true, text) }

// Dim styles secondary text.
func (s Style) Dim(text string) string { return s.paint("8", false, text) }

// Bold styles emphasised text.
func (s Style) Bold(text string) string {
	if !s.color {
		return text
	}
	return s.r.NewStyle().Bold(true).Render(text)
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	return nil
}

// WriteYAML writes v as YAML (via its JSON form, so json tags and Kubernetes types apply).
func WriteYAML(w io.Writer, v any) error {
	b, err := sigsyaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode yaml: %w", err)
	}
	_, err = w.Write(b)
	return err
}
