package mcphub

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/nodmix/nodmix/internal/config"
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

// A server's env values are masked in what it writes to stderr (and in the hub's errors) when
// they may be credentials, not all of them: LOG_LEVEL=info masked every "info" of every line.
// A value is taken for a credential when its variable's name says so (secretEnvName), or when
// it is at least minUnnamedSecret bytes long: the keys and tokens servers are given (GitHub's 40
// characters, OpenAI's 51, AWS's 20 and 40, UUIDs, JWTs) are all that long, and the settings
// that are not secrets (info, production, true, 3000, localhost) are shorter. A value shorter
// than 4 bytes is never masked: it would mangle ordinary words and is hardly a credential.
const minUnnamedSecret = 16

// envSecretWords are the words of an env name that mark its value as secret, besides the names
// config.IsSecretName takes (…TOKEN, …SECRET, …PASSWORD, …API_KEY,
// …COOKIE, …AUTHORIZATION): env names put these words anywhere (AWS_SECRET_ACCESS_KEY,
// PRIVATE_KEY_PEM, REDIS_PASS, SESSION_ID), where config's rule, made for camelCase config keys
// where maxTokens is a count, looks at the end.
var envSecretWords = []string{"key", "keys", "auth", "credential", "credentials", "session", "private", "pass", "pwd", "secret", "token"}

// secretEnvName reports whether an env variable's name marks its value as a secret.
func secretEnvName(name string) bool {
	if config.IsSecretName(name) {
		return true
	}
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return slices.ContainsFunc(words, func(w string) bool { return slices.Contains(envSecretWords, w) })
}

// inheritedEnv is what a command server with inheritEnv takes of nodmix's environment; nil when
// it takes only the default set, none of which is secret.
func inheritedEnv(h *Hub, cfg ServerConfig) []string {
	if !cfg.InheritEnv || cfg.Command == "" {
		return nil
	}
	return h.environ()
}
