package mcphub

import (
	"maps"
	"slices"
	"strings"
)

// defaultEnvFor names the variables a command server inherits from nodmix unless its config says
// inheritEnv: the list the official MCP SDKs use (the one sudo keeps), plus the locale (LANG here,
// and every LC_* in serverEnv). Everything else nodmix runs with, its API keys first of all, stays
// out of reach of a server's tools; a server that needs more gets it through its own env.
func defaultEnvFor(goos string) []string {
	if goos == "windows" {
		return []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
			"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES", "LANG"}
	}
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG"}
}

// serverEnv is the environment of a command server: from environ (KEY=VALUE entries) the default
// names (or everything with InheritEnv), then the server's own env in key order, which wins.
// The result is never nil, since a nil Cmd.Env would mean the whole environment.
func serverEnv(environ []string, cfg ServerConfig, goos string) []string {
	names := defaultEnvFor(goos)
	fold := goos == "windows" // Windows names are case-insensitive
	keep := func(key, value string) bool {
		if cfg.InheritEnv {
			return true
		}
		// The SDKs skip exported shell functions, which some shells run on start.
		if strings.HasPrefix(value, "()") {
			return false
		}
		if fold {
			key = strings.ToUpper(key)
		}
		return slices.Contains(names, key) || strings.HasPrefix(key, "LC_")
	}
	out := make([]string, 0, len(names)+len(cfg.Env))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, own := cfg.Env[k]; own {
			continue
		}
		if keep(k, v) {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		out = append(out, k+"="+cfg.Env[k])
	}
	return out
}
