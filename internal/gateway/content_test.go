package gateway

import (
	"runtime"
	"strings"
	"testing"
)

// TestManyContentPartsCostLinearMemory: a message of many text parts is read in memory
// proportional to the body; the text of each part used to be added to a copy of all before it,
// which for the million parts a body of the maximum size holds was hours of CPU and terabytes
// allocated.
func TestManyContentPartsCostLinearMemory(t *testing.T) {
	parts := func(n int) string {
		return `[` + strings.Repeat(`{"type":"text","text":"abcdefgh"},`, n-1) + `{"type":"text","text":"x"}]`
	}
	const n = 20000
	bodies := map[string]string{
		"chat system":      `{"messages":[{"role":"system","content":` + parts(n) + `},{"role":"user","content":"hi"}]}`,
		"chat user":        `{"messages":[{"role":"user","content":` + parts(n) + `}]}`,
		"chat tool result": `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"c","content":` + parts(n) + `}]}`,
		"responses output": `{"input":[{"type":"function_call","call_id":"c","name":"f"},{"type":"function_call_output","call_id":"c","output":` + parts(n) + `}]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			if strings.HasPrefix(name, "chat") {
				_, _, err = parseChat([]byte(body))
			} else {
				_, _, err = parseResponses([]byte(body))
			}
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			// Linear reading allocates a few dozen times the body; the quadratic one, thousands.
			if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(200*len(body)); got > limit {
				t.Errorf("reading a %d-byte body of %d parts allocated %d bytes, over %d", len(body), n, got, limit)
			}
		})
	}
}
