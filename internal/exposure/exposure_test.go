package exposure_test

import (
	"testing"

	"github.com/nodmix/nodmix/internal/discovery"
	"github.com/nodmix/nodmix/internal/exposure"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		tsOn     bool
		tsMode   string
		disc     discovery.Mode
		codeOK   bool
		want     exposure.Mode
		scenario string
	}{
		{false, "", discovery.Off, true, exposure.Direct, "nothing configured"},
		{false, "", discovery.MCPOnly, true, exposure.Discovery, "discovery on"},
		{false, "", discovery.All, true, exposure.Discovery, "discovery all"},
		{true, "code", discovery.MCPOnly, true, exposure.ToolSearchCode, "Tool Search wins over discovery"},
		{true, "tools", discovery.Off, true, exposure.ToolSearchTools, "tools mode"},
		{true, "code", discovery.Off, false, exposure.ToolSearchTools, "code falls back to tools without a sandbox"},
	}
	for _, tt := range tests {
		if got := exposure.Resolve(tt.tsOn, tt.tsMode, tt.disc, tt.codeOK); got != tt.want {
			t.Errorf("%s: Resolve = %s, want %s", tt.scenario, got, tt.want)
		}
	}
	for _, m := range exposure.Modes {
		if got, err := exposure.ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%s) = %s, %v", m, got, err)
		}
	}
	if _, err := exposure.ParseMode("everything"); err == nil || err.Error() != "mode: must be one of direct, discovery, toolsearch-tools, toolsearch-code" {
		t.Errorf("bad mode error = %v", err)
	}
}
