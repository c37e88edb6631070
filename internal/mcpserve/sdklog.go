package mcpserve

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// clientMistakes are the messages the SDK logs at ERROR for a client's protocol mistake, which
// it also answers (or, for a notification, ignores). They are not errors of nodmix.
var clientMistakes = map[string]bool{
	"duplicate initialized notification":   true,
	"initialized before initialize":        true,
	"duplicate initialize request":         true,
	"method invalid during initialization": true,
	"method removed in the new protocol":   true,
}

// sdkLog is the logger an SDK server gets: records of a client's protocol mistake become one
// Warn line, the first of the logger's life (a session's, for a binding), and are dropped after
// that, so that a client repeating its mistake cannot fill the log. Every other record passes
// as it is, errors included.
func sdkLog(l *slog.Logger) *slog.Logger {
	return slog.New(&mistakeHandler{Handler: l.Handler(), said: new(atomic.Bool)})
}

type mistakeHandler struct {
	slog.Handler
	said *atomic.Bool // shared with the handlers WithAttrs and WithGroup derive
}

func (h *mistakeHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelError || !clientMistakes[r.Message] {
		return h.Handler.Handle(ctx, r)
	}
	if h.said.Swap(true) || !h.Handler.Enabled(ctx, slog.LevelWarn) {
		return nil
	}
	w := slog.NewRecord(r.Time, slog.LevelWarn, "mcp client protocol mistake: "+r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		w.AddAttrs(a)
		return true
	})
	w.AddAttrs(slog.String("note", "later protocol mistakes of this client are not logged"))
	return h.Handler.Handle(ctx, w)
}

func (h *mistakeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &mistakeHandler{Handler: h.Handler.WithAttrs(attrs), said: h.said}
}

func (h *mistakeHandler) WithGroup(name string) slog.Handler {
	return &mistakeHandler{Handler: h.Handler.WithGroup(name), said: h.said}
}
