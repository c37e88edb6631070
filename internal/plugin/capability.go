package plugin

import (
	"github.com/nodmix/nodmix/internal/catalog"
	"github.com/nodmix/nodmix/internal/dispatch"
)

// ToolProvider is a plugin that contributes tools. Tools must return the same entries on every
// call unless the plugin signals a change.
type ToolProvider interface {
	Tools() []catalog.Entry
}

// MiddlewareProvider is a plugin that post-processes tool results.
type MiddlewareProvider interface {
	Middleware() dispatch.Middleware
}
