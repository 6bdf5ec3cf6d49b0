package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

func TestPrecedenceFlagEnvFileDefault(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ork.yaml")
	if err := os.WriteFile(file, []byte("log-level: warn\nlog-format: json\nworkers: 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ORK_LOG_FORMAT", "text")
	t.Setenv("ORK_WORKERS", "9")

	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("log-level", "info", "")
	fs.String("log-format", "logfmt", "")
	fs.Int("workers", 4, "")
	fs.String("output", "text", "")
	if err := fs.Parse([]string{"--workers=11"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(fs, file)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ name, got, want string }{
		{"flag beats env and file", c.String("workers"), "11"},
		{"env beats file", c.String("log-format"), "text"},
		{"file beats default", c.String("log-level"), "warn"},
		{"default", c.String("output"), "text"},
		{"source of a flag", c.Source("workers"), "--workers"},
		{"source of an env var", c.Source("log-format"), "ORK_LOG_FORMAT"},
		{"source of the file", c.Source("log-level"), file},
		{"source of a default", c.Source("output"), "the default"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %q, want %q", ch.name, ch.got, ch.want)
		}
	}
}

func TestExplicitConfigFileMustExist(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	if _, err := Load(fs, filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("Load with a missing explicit config file succeeded")
	}
}

func TestDefaultFileIsExactlyOrkYAML(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", dir)
	// A binary named "ork" beside the user must never be read as settings.
	if err := os.WriteFile(filepath.Join(dir, "ork"), []byte("\x7fELF\x00binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("log-level", "info", "")
	c, err := Load(fs, "")
	if err != nil {
		t.Fatalf("Load read the ork binary as config: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ork.yaml"), []byte("log-level: debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err = Load(fs, ""); err != nil || c.String("log-level") != "debug" {
		t.Fatalf("./ork.yaml not read: %v, log-level %q", err, c.String("log-level"))
	}
}
