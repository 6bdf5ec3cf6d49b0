package run

import (
	"context"
	"log/slog"
)

// logger is a thin helper over slog so call sites stay short.
type logger struct{ l *slog.Logger }

func (l logger) debug(msg string, args ...any) { l.l.Log(context.Background(), slog.LevelDebug, msg, args...) }
func (l logger) info(msg string, args ...any)  { l.l.Log(context.Background(), slog.LevelInfo, msg, args...) }
func (l logger) warn(msg string, args ...any)  { l.l.Log(context.Background(), slog.LevelWarn, msg, args...) }
func (l logger) with(args ...any) logger      { return logger{l.l.With(args...)} }
