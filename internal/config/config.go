// Package config resolves ork's own settings with one viper instance per run:
// flag > ORK_* environment variable > settings file > default.
package config

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix prefixes every environment variable: --log-level is ORK_LOG_LEVEL.
const EnvPrefix = "ORK"

// Settings are the settings file's values for the command that runs, by flag name.
type Settings struct {
	// Path is the file they come from; "" without a settings file.
	Path string
	// Values holds each setting by flag name.
	Values map[string]any
	// Keys holds, by flag name, where in the file each value is: "log-level" for a global
	// setting, "rbac.gen.namespace" for one of a command's section.
	Keys map[string]string
}

// Config answers settings by flag name.
type Config struct {
	v        *viper.Viper
	flags    *pflag.FlagSet
	settings Settings
}

// Load binds every flag in flags, the ORK_* environment and the settings file's values for
// the command. User Katalogs never go through here: viper lowercases keys.
func Load(flags *pflag.FlagSet, s Settings) (*Config, error) {
	v := viper.New()
	if err := v.BindPFlags(flags); err != nil {
		return nil, fmt.Errorf("bind flags: %w", err)
	}
	v.SetEnvPrefix(EnvPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if len(s.Values) > 0 {
		if err := v.MergeConfigMap(s.Values); err != nil {
			return nil, fmt.Errorf("settings file %s: %w", s.Path, err)
		}
	}
	return &Config{v: v, flags: flags, settings: s}, nil
}

// Source says where the setting for the flag name came from, for error messages: "--name",
// "ORK_NAME", the settings file's path and key, or "the default".
func (c *Config) Source(name string) string {
	if f := c.flags.Lookup(name); f != nil && f.Changed {
		return "--" + name
	}
	env := EnvPrefix + "_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if _, ok := os.LookupEnv(env); ok {
		return env
	}
	if key, ok := c.settings.Keys[name]; ok {
		if key == name {
			return c.settings.Path
		}
		return c.settings.Path + " (" + key + ")"
	}
	return "the default"
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
