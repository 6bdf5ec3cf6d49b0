package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The markers around a Section file's content: `ork init` in a directory that has a README
// adds its part below the user's text, and --force replaces only that part.
const (
	SectionStart = "<!-- ork init: start -->"
	SectionEnd   = "<!-- ork init: end -->"
)

// ExistsError is Write refusing to overwrite files.
type ExistsError struct {
	// Paths are the files that exist, as Write would have written them.
	Paths []string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already exist(s); nothing was written (--force overwrites)", strings.Join(e.Paths, ", "))
}

// Write writes files below dir, creating directories as needed, and returns their paths.
// Unless force, it first checks that none of them exists, and writes nothing if one does.
// A Section file that exists is no obstacle unless it already holds ork init's section: its
// content goes into that section (with force) or is appended.
func Write(dir string, files []File, force bool) ([]string, error) {
	paths := make([]string, len(files))
	data := make([][]byte, len(files))
	var exist []string
	for i, f := range files {
		paths[i] = filepath.Join(dir, filepath.FromSlash(f.Path))
		data[i] = f.Data
		old, err := os.ReadFile(paths[i])
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		}
		if !f.Section {
			exist = append(exist, paths[i])
			continue
		}
		merged, had := mergeSection(old, f.Data)
		if had {
			exist = append(exist, paths[i])
		}
		data[i] = merged
	}
	if len(exist) > 0 && !force {
		return nil, &ExistsError{Paths: exist}
	}
	for i, f := range files {
		if err := os.MkdirAll(filepath.Dir(paths[i]), 0o755); err != nil {
			return paths[:i], err
		}
		if err := os.WriteFile(paths[i], data[i], f.Mode); err != nil {
			return paths[:i], err
		}
		if err := os.Chmod(paths[i], f.Mode); err != nil { // WriteFile keeps an existing file's mode
			return paths[:i], err
		}
	}
	return paths, nil
}

// mergeSection puts section (which starts with SectionStart and ends with SectionEnd and a
// newline) into old: in place of old's section when it has one (had), else appended after
// a blank line.
func mergeSection(old, section []byte) (merged []byte, had bool) {
	start := bytes.Index(old, []byte(SectionStart))
	end := bytes.Index(old, []byte(SectionEnd))
	if start >= 0 && end > start {
		end += len(SectionEnd)
		if end < len(old) && old[end] == '\n' {
			end++
		}
		return append(append(append([]byte{}, old[:start]...), section...), old[end:]...), true
	}
	out := bytes.TrimRight(old, "\n")
	if len(out) > 0 {
		out = append(out, "\n\n"...)
	}
	return append(append([]byte{}, out...), section...), false
}
