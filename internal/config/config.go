// Package config resolves ork's own settings with one viper instance per run:
// flag > ORK_* environment variable > config file > default.
package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix prefixes every environment variable: --log-level is ORK_LOG_LEVEL.
const EnvPrefix = "ORK"

// Config answers settings by flag name.
type Config struct{ v *viper.Viper }

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
	if file != "" {
		v.SetConfigFile(file)
	} else {
		v.SetConfigName("ork")
		v.SetConfigType("yaml")
		v.AddConfigPath(".")
		v.AddConfigPath("$HOME/.config/ork")
	}
	if err := v.ReadInConfig(); err != nil {
		var notFound viper.ConfigFileNotFoundError
		if file != "" || !errors.As(err, &notFound) {
			return nil, fmt.Errorf("read config file: %w", err)
		}
	}
	return &Config{v: v}, nil
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
