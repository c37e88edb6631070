//go:build unix

package exec

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nodmix/nodmix/internal/catalog"
)

// BenchmarkExecTrue is the floor of one call: spawning a process and reporting it. Result
// middleware (tokenjuice) is measured against it.
func BenchmarkExecTrue(b *testing.B) {
	ex := Tools(Options{})[0]
	call := catalog.Call{Tool: &ex.Tool, Args: json.RawMessage(`{"command":["true"]}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ex.Exec.Execute(context.Background(), call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaptureWrite is the cost per byte of keeping head and tail of a stream.
func BenchmarkCaptureWrite(b *testing.B) {
	chunk := make([]byte, 32<<10)
	for i := range chunk {
		chunk[i] = 'a' + byte(i%26)
		if i%80 == 79 {
			chunk[i] = '\n'
		}
	}
	c := newCapture(1 << 20)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		c.Write(chunk)
	}
}
