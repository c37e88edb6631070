package plugin

import (
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// ToolProvider is a plugin that contributes tools. The app reads Tools once, after Start, so a
// plugin's tools are fixed for its lifetime.
type ToolProvider interface {
	Tools() []catalog.Entry
}

// MiddlewareProvider is a plugin that post-processes tool results.
type MiddlewareProvider interface {
	Middleware() dispatch.Middleware
}
