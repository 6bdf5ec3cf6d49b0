package scaffold

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
func Write(dir string, files []File, force bool) ([]string, error) {
	paths := make([]string, len(files))
	var exist []string
	for i, f := range files {
		paths[i] = filepath.Join(dir, filepath.FromSlash(f.Path))
		if _, err := os.Lstat(paths[i]); err == nil {
			exist = append(exist, paths[i])
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if len(exist) > 0 && !force {
		return nil, &ExistsError{Paths: exist}
	}
	for i, f := range files {
		if err := os.MkdirAll(filepath.Dir(paths[i]), 0o755); err != nil {
			return paths[:i], err
		}
		if err := os.WriteFile(paths[i], f.Data, f.Mode); err != nil {
			return paths[:i], err
		}
		if err := os.Chmod(paths[i], f.Mode); err != nil { // WriteFile keeps an existing file's mode
			return paths[:i], err
		}
	}
	return paths, nil
}
