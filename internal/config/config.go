// Package config resolves ork's own settings with one viper instance per run:
// flag > ORK_* environment variable > config file > default.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix prefixes every environment variable: --log-level is ORK_LOG_LEVEL.
const EnvPrefix = "ORK"

// Config answers settings by flag name.
type Config struct {
	v     *viper.Viper
	flags *pflag.FlagSet
}

// Load binds every flag in flags, the ORK_* environment and the optional config file (an
// explicit file must exist; without one, ork reads ./ork.yaml or $HOME/.config/ork/config.yaml
// when present). User Katalogs never go through here: viper lowercases keys.
func Load(flags *pflag.FlagSet, file string) (*Config, error) {
	v := viper.New()
	if err := v.BindPFlags(flags); err != nil {
		return nil, fmt.Errorf("bind flags: %w", err)
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if file == "" {
		file = defaultFile()
	}
	if file != "" {
		if _, err := os.Stat(file); err != nil {
			return nil, fmt.Errorf("config file %s: %w", file, errors.Unwrap(err))
		}
		v.SetConfigFile(file)
		v.SetConfigType("yaml") // whatever its name ends in
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("read config file: %w", err)
		}
	}
	return &Config{v: v, flags: flags}, nil
}

// defaultFile is the first of ./ork.yaml and ~/.config/ork/config.yaml that exists, else "".
// Exact names: viper's search by base name would also pick up a binary called "ork".
func defaultFile() string {
	candidates := []string{"ork.yaml"}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "ork", "config.yaml"))
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// Source says where the setting for the flag name came from, for error messages: "--name",
// "ORK_NAME", the config file's path, or "the default".
func (c *Config) Source(name string) string {
	if f := c.flags.Lookup(name); f != nil && f.Changed {
		return "--" + name
	}
	env := EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if _, ok := os.LookupEnv(env); ok {
		return env
	}
	if c.v.InConfig(name) {
		return c.v.ConfigFileUsed()
	}
	return "the default"
}

// FileKeys lists, sorted, the settings the config file sets; none without a file.
func (c *Config) FileKeys() []string {
	if c.v.ConfigFileUsed() == "" {
		return nil
	}
	var keys []string
	for _, k := range c.v.AllKeys() {
		if c.v.InConfig(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// String returns the setting for the flag name.
func (c *Config) String(name string) string { return c.v.GetString(name) }

// Bool returns the setting for the flag name.
func (c *Config) Bool(name string) bool { return c.v.GetBool(name) }

// Int returns the setting for the flag name.
func (c *Config) Int(name string) int { return c.v.GetInt(name) }

// Float returns the setting for the flag name.
func (c *Config) Float(name string) float64 { return c.v.GetFloat64(name) }

// Duration returns the setting for the flag name.
func (c *Config) Duration(name string) time.Duration { return c.v.GetDuration(name) }

// StringSlice returns the setting for the flag name.
func (c *Config) StringSlice(name string) []string { return c.v.GetStringSlice(name) }
