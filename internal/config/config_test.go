package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestPrecedenceFlagEnvFileDefault(t *testing.T) {
	t.Setenv("ORK_LOG_FORMAT", "text")
	t.Setenv("ORK_WORKERS", "9")

	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("log-level", "info", "")
	fs.String("log-format", "logfmt", "")
	fs.Int("workers", 4, "")
	fs.String("output", "text", "")
	fs.String("namespace", "", "")
	if err := fs.Parse([]string{"--workers=11"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(fs, Settings{
		Path:   "cfg.yaml",
		Values: map[string]any{"log-level": "warn", "log-format": "json", "workers": 7, "namespace": "ops"},
		Keys:   map[string]string{"log-level": "log-level", "log-format": "log-format", "workers": "run.workers", "namespace": "run.namespace"},
	})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ name, got, want string }{
		{"flag beats env and file", c.String("workers"), "11"},
		{"env beats file", c.String("log-format"), "text"},
		{"file beats default", c.String("log-level"), "warn"},
		{"a section's setting", c.String("namespace"), "ops"},
		{"default", c.String("output"), "text"},
		{"source of a flag", c.Source("workers"), "--workers"},
		{"source of an env var", c.Source("log-format"), "ORK_LOG_FORMAT"},
		{"source of a global setting", c.Source("log-level"), "cfg.yaml"},
		{"source of a section's setting", c.Source("namespace"), "cfg.yaml (run.namespace)"},
		{"source of a default", c.Source("output"), "the default"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %q, want %q", ch.name, ch.got, ch.want)
		}
	}
}

func TestReadFileMustExist(t *testing.T) {
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("ReadFile of a missing settings file succeeded")
	}
}

func TestReadFileNamesAKatalog(t *testing.T) {
	p := filepath.Join(t.TempDir(), "katalog.yaml")
	katalog := "apiVersion: orkestra.orkspace.io/v1\nkind: Katalog\nspec: {crds: {}}\n"
	if err := os.WriteFile(p, []byte(katalog), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(p)
	if err == nil || !strings.Contains(err.Error(), "is a Katalog, not ork's settings") {
		t.Fatalf("ReadFile of a Katalog: %v, want it named as a Katalog", err)
	}
}

func TestDefaultPathIsTheUserConfigDirOnly(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	// Neither ./ork.yaml nor a binary named "ork" beside the user is ever read as settings.
	for _, name := range []string{"ork.yaml", "ork"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("log-level: debug\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": filepath.Join(dir, "home")}
	getenv := func(k string) string { return env[k] }
	if p := DefaultPath(getenv); p != "" {
		t.Fatalf("DefaultPath without a user settings file = %q, want none", p)
	}
	home := filepath.Join(dir, "home", ".config", "ork", "config.yaml")
	xdg := filepath.Join(dir, "xdg", "ork", "config.yaml")
	for _, p := range []string{home, xdg} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("log-level: debug\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if p := DefaultPath(getenv); p != home {
		t.Errorf("DefaultPath without XDG_CONFIG_HOME = %q, want %q", p, home)
	}
	env["XDG_CONFIG_HOME"] = filepath.Join(dir, "xdg")
	if p := DefaultPath(getenv); p != xdg {
		t.Errorf("DefaultPath with XDG_CONFIG_HOME = %q, want %q", p, xdg)
	}
}
