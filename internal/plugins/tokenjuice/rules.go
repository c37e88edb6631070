package tokenjuice

import (
	"bytes"
	"slices"
	"strings"
)

// rules is the classification table, tried in order; the first match wins. Matchers look at the
// effective argv of the main pipeline's source (see effective), so "python -m pytest", "npx jest"
// and "sudo apt-get install" find their rules.
var rules = []*rule{
	// help first: "git help" and "docker --help" are help, whatever the program
	{id: "help", family: "help", match: isHelp, reduce: reduceHelp},

	// git
	{id: "git/status", family: "git", match: gitIs("status"), reduce: reduceGitStatus},
	{id: "git/diff", family: "git", match: gitIs("diff"), reduce: reduceGitDiff},
	{id: "git/show", family: "git", match: gitIs("show"), reduce: reduceGitShow},
	{id: "git/log", family: "git", match: gitIs("log", "reflog", "whatchanged"), reduce: reduceGitLog},
	{id: "git/blame", family: "git", match: gitIs("blame", "annotate"), reduce: reduceGitBlame},
	{id: "git/commit", family: "git", match: gitIs("commit", "merge", "cherry-pick", "revert", "am"), reduce: reduceGitCommit},
	{id: "git/branch", family: "git", match: gitIs("branch", "tag", "stash", "remote", "worktree"), reduce: reduceList(isCurrentBranch)},
	{id: "git/grep", family: "search", match: gitIs("grep"), reduce: reduceGrep, streams: true},
	{id: "git/ls-files", family: "inventory", match: gitIs("ls-files", "ls-tree"), reduce: reducePaths, streams: true},
	{id: "git/transfer", family: "git", match: gitIs("clone", "fetch", "pull", "push", "submodule", "gc", "checkout", "switch", "rebase"), reduce: reduceGeneric, streams: true},

	// tests
	{id: "tests/go", family: "tests", match: goIs("test"), reduce: reduceGoTest},
	{id: "tests/pytest", family: "tests", match: nameIs("pytest", "py.test"), reduce: reduceTests},
	{id: "tests/jest", family: "tests", match: nameIs("jest"), reduce: reduceTests},
	{id: "tests/vitest", family: "tests", match: nameIs("vitest"), reduce: reduceTests},
	{id: "tests/cargo", family: "tests", match: subIs("cargo", "test", "nextest"), reduce: reduceTests},
	{id: "tests/npm", family: "tests", match: npmScript("test", "t", "tst"), reduce: reduceTests},
	{id: "tests/node", family: "tests", match: func(_ *command, s *simple) bool {
		return (s.name() == "node" || s.name() == "bun" || s.name() == "deno") && s.has("--test", "test")
	}, reduce: reduceTests},
	{id: "tests/other", family: "tests", match: nameIs("mocha", "playwright", "rspec", "phpunit", "unittest", "tox", "nox", "ctest"), reduce: reduceTests},

	// package managers
	{id: "install/npm", family: "package", match: pkgInstall, reduce: reduceNodeInstall},
	{id: "install/pip", family: "package", match: pipIs("install", "download", "uninstall"), reduce: reducePipInstall},
	{id: "package/pip-list", family: "package", match: pipIs("list", "freeze"), reduce: reducePipList},
	{id: "package/apt", family: "package", match: nameIs("apt", "apt-get", "aptitude"), reduce: reduceApt},
	{id: "package/apt-policy", family: "package", match: aptCacheIs("policy"), reduce: reduceAptPolicy},
	{id: "package/apt-search", family: "package", match: aptCacheIs("search"), reduce: reduceNameList},
	{id: "package/records", family: "package", match: func(c *command, s *simple) bool {
		return aptCacheIs("show")(c, s) || s.name() == "apt" && firstOperand(s) == "show" ||
			s.name() == "dpkg" && s.has("-s", "--status", "-p", "--print-avail") || s.name() == "dpkg-query" && s.has("-s")
	}, reduce: reduceRecords},
	{id: "package/dpkg-list", family: "package", match: func(_ *command, s *simple) bool {
		return s.name() == "dpkg" && (s.has("-l", "--list") || s.hasShort('l')) || s.name() == "dpkg-query" && s.has("-l")
	}, reduce: reduceDpkgList},
	{id: "package/pip-show", family: "package", match: pipIs("show"), reduce: reducePipShow},
	{id: "package/go-mod", family: "package", match: goModIs, reduce: reduceGoMod},
	{id: "package/npm-ls", family: "package", match: npmIs("ls", "list", "la", "ll"), reduce: reduceNpmLs},
	{id: "package/table", family: "package", match: npmIs("outdated", "audit", "view", "info"), reduce: reduceList(nil)},

	// builds
	{id: "build/go", family: "build", match: goIs("build", "vet", "install", "run", "generate"), reduce: reduceGoBuild},
	{id: "build/cargo", family: "build", match: subIs("cargo", "build", "check", "clippy", "run", "install", "doc"), reduce: reduceCargoBuild},
	{id: "build/tsc", family: "build", match: nameIs("tsc", "vue-tsc", "eslint", "biome", "oxlint", "prettier", "ruff", "mypy", "flake8", "pylint", "golangci-lint", "staticcheck"), reduce: reduceBuild},
	{id: "build/npm", family: "build", match: npmScript("build", "lint", "typecheck", "check", "compile"), reduce: reduceBuild},
	{id: "build/make", family: "build", match: nameIs("make", "gmake", "cmake", "ninja", "gcc", "g++", "cc", "c++", "clang", "clang++", "mvn", "gradle", "gradlew", "dotnet", "msbuild", "xcodebuild", "swift", "bazel"), reduce: reduceBuild},
	{id: "build/docker", family: "build", match: dockerBuild, reduce: reduceDockerBuild},

	// inventories and searches
	{id: "inventory/ls", family: "inventory", match: nameIs("ls", "exa", "eza", "lsd"), reduce: reduceLs},
	{id: "inventory/find", family: "inventory", match: nameIs("find", "fd", "fdfind", "locate"), reduce: reducePaths, streams: true},
	{id: "inventory/tree", family: "inventory", match: nameIs("tree"), reduce: reduceList(nil)},
	{id: "inventory/ps", family: "inventory", match: nameIs("ps"), reduce: reducePs},
	{id: "diff/unified", family: "diff", match: isUnifiedDiff, reduce: reduceUnifiedDiff},
	{id: "inventory/du", family: "inventory", match: nameIs("du"), reduce: reduceDu},
	{id: "inventory/archive", family: "inventory", match: nameIs("tar", "unzip", "zip", "zipinfo", "7z", "rsync"), reduce: reducePaths, streams: true},
	{id: "search/rg-files", family: "inventory", match: rgFiles, reduce: reducePaths, streams: true},
	{id: "search/grep", family: "search", match: nameIs("grep", "egrep", "fgrep", "rg", "ag", "ack", "git-grep"), reduce: reduceGrep, streams: true},
}

func nameIs(names ...string) func(*command, *simple) bool {
	return func(_ *command, s *simple) bool { return slices.Contains(names, s.name()) }
}

func subIs(prog string, subs ...string) func(*command, *simple) bool {
	return func(_ *command, s *simple) bool {
		if s.name() != prog {
			return false
		}
		for _, sub := range subs {
			if firstOperand(s) == sub {
				return true
			}
		}
		return false
	}
}

// firstOperand is the first argument that is not an option (a subcommand).
func firstOperand(s *simple) string {
	for _, a := range s.args() {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func gitIs(subs ...string) func(*command, *simple) bool {
	return func(_ *command, s *simple) bool {
		sub, _ := gitSub(s)
		return slices.Contains(subs, sub)
	}
}

func goIs(subs ...string) func(*command, *simple) bool { return subIs("go", subs...) }

func goModIs(_ *command, s *simple) bool {
	if s.name() != "go" {
		return false
	}
	sub := firstOperand(s)
	return sub == "mod" || sub == "get" || sub == "work"
}

func pipIs(subs ...string) func(*command, *simple) bool {
	return func(_ *command, s *simple) bool {
		n := s.name()
		if n == "uv" && s.arg(1) == "pip" {
			s = &simple{argv: s.argv[1:]}
			n = "pip"
		}
		if n != "pip" && n != "pip3" && n != "pipx" {
			return false
		}
		return slices.Contains(subs, firstOperand(s))
	}
}

func npmIs(subs ...string) func(*command, *simple) bool {
	return func(_ *command, s *simple) bool {
		if !isNodePM(s.name()) {
			return false
		}
		return slices.Contains(subs, firstOperand(s))
	}
}

// npmScript matches "npm test", "npm run build", "pnpm build", "yarn test" and so on.
func npmScript(scripts ...string) func(*command, *simple) bool {
	return func(_ *command, s *simple) bool {
		if !isNodePM(s.name()) {
			return false
		}
		ops := s.operands()
		if len(ops) > 0 && (ops[0] == "run" || ops[0] == "run-script") {
			ops = ops[1:]
		}
		if len(ops) == 0 {
			return false
		}
		for _, x := range scripts {
			if ops[0] == x || strings.HasPrefix(ops[0], x+":") {
				return true
			}
		}
		return false
	}
}

// isNodePM reports whether name is a JavaScript package manager; they share subcommand names.
func isNodePM(name string) bool {
	return name == "npm" || name == "pnpm" || name == "yarn" || name == "bun"
}

func pkgInstall(_ *command, s *simple) bool {
	if !isNodePM(s.name()) {
		return false
	}
	sub := firstOperand(s)
	if s.name() == "yarn" && sub == "" {
		return true
	}
	switch sub {
	case "install", "i", "ci", "add", "remove", "uninstall", "update", "up", "upgrade", "rm":
		return true
	}
	return false
}

func dockerBuild(_ *command, s *simple) bool {
	if s.name() != "docker" && s.name() != "podman" && s.name() != "buildah" {
		return false
	}
	ops := s.operands()
	return len(ops) > 0 && (ops[0] == "build" || len(ops) > 1 && ops[0] == "buildx" && ops[1] == "build" ||
		ops[0] == "compose" && len(ops) > 1 && ops[1] == "build")
}

func rgFiles(_ *command, s *simple) bool { return s.name() == "rg" && s.has("--files") }

func isHelp(_ *command, s *simple) bool {
	if s.name() == "man" {
		return true
	}
	if s.has("--help", "-help") {
		return true
	}
	if s.has("-h") {
		// "git log -h" is help; "grep -h" is not (it hides file names), nor "git grep -h".
		if sub, _ := gitSub(s); sub == "grep" {
			return false
		}
		return !shortHNotHelp[s.name()]
	}
	// "help" is a request only as the subcommand ("go help test", "git -C x help log", "make
	// help"); elsewhere it is data: "pytest -k help", "go test -run help", "grep -rn help src".
	if s.name() == "git" {
		sub, _ := gitSub(s)
		return sub == "help"
	}
	return len(s.argv) > 1 && s.argv[1] == "help" && !operandFirst[s.name()]
}

// shortHNotHelp are programs whose -h is an option of their own: no file names (the greps),
// human-readable sizes, dereferenced links (tar), a header (eza).
var shortHNotHelp = map[string]bool{
	"grep": true, "egrep": true, "fgrep": true, "zgrep": true, "rg": true, "ag": true, "ack": true,
	"ls": true, "exa": true, "eza": true, "lsd": true, "du": true, "df": true, "sort": true, "free": true,
	"tar": true, "rsync": true, "ip": true,
}

// operandFirst are programs whose first argument is a pattern or a path, never a subcommand.
var operandFirst = map[string]bool{
	"grep": true, "egrep": true, "fgrep": true, "rg": true, "ag": true, "ack": true, "find": true, "fd": true,
	"fdfind": true, "locate": true, "ls": true, "tree": true, "du": true, "echo": true, "printf": true,
}

func isCurrentBranch(l []byte) bool { return bytes.HasPrefix(l, []byte("* ")) }

// reduceList samples a list of lines, keeping the lines keep selects (salient ones by default)
// within a budget of their own.
func reduceList(keep func([]byte) bool) func(d *doc) (string, bool) {
	return func(d *doc) (string, bool) {
		lines := condense(d.lines)
		sal := keep
		if sal == nil {
			sal = isSalient
		}
		return strings.Join(selectLines(lines, sampleBudget, sal, salientBudget/2), "\n"), true
	}
}
