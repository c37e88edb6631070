//go:build !unix

package exec

import (
	"context"
	"errors"
)

// run is not available off Unix: process groups are how nodmix kills a command and all it started.
func run(context.Context, *request, *Options) outcome {
	return outcome{exitCode: -1, spawnErr: errors.New("exec and bash need a Unix system (process groups)")}
}
