// Command gojafloor is the least a code-mode child can be: a Go process that makes one goja
// runtime and runs one statement. BenchmarkProcessStart times it as the floor of a cold child.
package main

import (
	"os"

	"github.com/dop251/goja"
)

func main() {
	if _, err := goja.New().RunString("1 + 1"); err != nil {
		os.Exit(1)
	}
}
