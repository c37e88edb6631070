#!/usr/bin/env bash
# record NAME CWD CMD : runs CMD with bash -c in CWD, stores combined output, exit code and command.
set -u
# Usage: record.sh OUTDIR. Re-records the golden inputs in OUTDIR/<case>/ from real commands run in a
# scratch directory; machine paths are rewritten to /home/dev/... as in the benchmark corpus.
OUT=${1:?usage: record.sh OUTDIR}
W=$(mktemp -d)
record() {
  local name=$1 cwd=$2 cmd=$3
  mkdir -p "$OUT/$name"
  (cd "$cwd" && bash -c "$cmd" > "$OUT/$name/output.txt" 2>&1; echo $? > "$OUT/$name/exit_code.txt")
  printf "%s\n" "$cmd" | sed -e "s#$W#/home/dev/work#g" > "$OUT/$name/cmd.txt"
  # no machine paths in the repo
  sed -i -e "s#$W#/home/dev/work#g" -e "s#$HOME/go#/home/dev/go#g" -e "s#$HOME/#/home/dev/#g" "$OUT/$name/output.txt"
}
export GIT_AUTHOR_NAME="Dev Example" GIT_AUTHOR_EMAIL=dev@example.com GIT_COMMITTER_NAME="Dev Example" GIT_COMMITTER_EMAIL=dev@example.com
export GIT_AUTHOR_DATE="2026-01-05T10:00:00Z" GIT_COMMITTER_DATE="2026-01-05T10:00:00Z"
mkdir -p $W/repo && cd $W/repo
git init -q -b main .
mkdir -p src/api src/store docs
for f in src/api/handler.go src/api/routes.go src/store/db.go src/store/cache.go docs/guide.md README.md; do
  for i in $(seq 1 30); do echo "line $i of $f"; done > $f
done
git add -A && git commit -q -m "initial import"
for n in 1 2 3 4 5 6; do echo "change $n" >> src/api/handler.go; git commit -qam "api: tune handler step $n"; done
git mv src/store/cache.go src/store/lru.go && git commit -qm "store: rename cache to lru"
sed -i 's/line 5 of/LINE FIVE of/' src/api/routes.go src/store/db.go
sed -i '20,25d' docs/guide.md
echo "new feature" > src/api/feature.go
git add src/api/feature.go
echo tmp > scratch.log; mkdir -p notes; echo a > notes/a.md; echo b > notes/b.md
record git_status_long $W/repo "git status"
record git_status_porcelain $W/repo "git status --porcelain"
record git_diff_worktree $W/repo "git diff"
record git_log_default $W/repo "git log -n 5"
record git_log_oneline $W/repo "git log --oneline"
record git_show_head $W/repo "git show HEAD~1"
for b in feature/login feature/search fix/cache-eviction release/1.2 chore/deps; do git branch $b; done
record git_branch $W/repo "git branch -a"
record git_blame_small $W/repo "git blame src/api/handler.go"
record git_clone_local $W "git clone --progress file://$W/repo clone2"
record git_commit_many $W/repo "git add -A && git commit -m 'wip: notes and scratch'"
record git_show_file $W/repo "git show HEAD:README.md"
record cat_file $W/repo "cat src/api/routes.go"
record sed_range $W/repo "sed -n '3,9p' src/store/db.go"
# go
mkdir -p $W/gomod/calc $W/gomod/panicky $W/gomod/okpkg $W/gobroken
cd $W/gomod && cat > go.mod <<'G'
module example.com/gomod

go 1.22
G
cat > calc/calc.go <<'G'
package calc

func Add(a, b int) int { return a + b + 1 }
G
cat > calc/calc_test.go <<'G'
package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 2); got != 4 {
		t.Errorf("Add(2, 2) = %d, want 4", got)
	}
}

func TestAddZero(t *testing.T) {
	if got := Add(0, 0); got != 0 {
		t.Fatalf("Add(0, 0) = %d, want 0", got)
	}
}

func TestSub(t *testing.T) {}
G
cat > panicky/p.go <<'G'
package panicky

import "sync"

func Boom() {
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); select {} }()
	}
	var m map[string]int
	m["x"] = 1
}
G
cat > panicky/p_test.go <<'G'
package panicky

import "testing"

func TestBoom(t *testing.T) { Boom() }
G
cat > okpkg/ok.go <<'G'
package okpkg

import "fmt"

func One() int { fmt.Printf("%d\\n", "one"); return 1 }
G
cat > okpkg/ok_test.go <<'G'
package okpkg

import "testing"

func TestOne(t *testing.T) {
	if One() != 1 {
		t.Fatal("one")
	}
}
G
record go_test_fail $W/gomod "go test ./..."
record go_vet $W/gomod "go vet ./..."
mkdir -p $W/crash && cd $W/crash && printf 'module example.com/crash\n\ngo 1.22\n' > go.mod && cat > main.go <<'G'
package main

import (
	"fmt"
	"time"
)

func worker(id int, ch chan int) {
	for v := range ch {
		_ = v * id
	}
}

func process(items []int, i int) int { return items[i] }

func main() {
	for i := 0; i < 6; i++ {
		go worker(i, make(chan int))
	}
	time.Sleep(10 * time.Millisecond)
	fmt.Println("processing 3 items")
	fmt.Println(process([]int{1, 2, 3}, 5))
}
G
go build -o crash . && record go_panic_goroutines $W/crash "GOTRACEBACK=all ./crash"
cd $W/gobroken && printf 'module example.com/broken\n\ngo 1.22\n' > go.mod && cat > main.go <<'G'
package main

import (
	"fmt"
	"os"
)

func main() {
	var unused int
	x := undefinedThing()
	fmt.Println("hi" + 1)
}
G
record go_build_fail $W/gobroken "go build ./..."
# go test -json with a package that fails to build (Go 1.24+ reports its errors as build-output
# and build-fail events, and FailedBuild on the package's fail event), one that fails vet, one that
# imports the broken one, a passing one and a failing test; the go_test_json_* and go_build_json
# cases. The paths go prints are relative to the module; the scratch directory, should one appear,
# becomes /home/dev/work like everywhere else.
mkdir -p $W/gojson/good $W/gojson/broken $W/gojson/vetbad $W/gojson/usesbroken $W/gojson/failing
cd $W/gojson && printf 'module example.com/demo\n\ngo 1.22\n' > go.mod
cat > good/good.go <<'G'
package good

// Add returns the sum of a and b.
func Add(a, b int) int { return a + b }
G
cat > good/good_test.go <<'G'
package good

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestAddZero(t *testing.T) {
	if got := Add(0, 0); got != 0 {
		t.Fatalf("Add(0, 0) = %d, want 0", got)
	}
}
G
cat > broken/broken.go <<'G'
package broken

// Half returns n divided by two.
func Half(n int) int {
	var unused string
	return n / "2"
}
G
cat > broken/broken_test.go <<'G'
package broken

import "testing"

func TestHalf(t *testing.T) {
	if Half(4) != 2 {
		t.Fatal("bad")
	}
}
G
cat > vetbad/v.go <<'G'
package vetbad

import "fmt"

// One prints one.
func One() int { fmt.Printf("%d\n", "one"); return 1 }
G
cat > vetbad/v_test.go <<'G'
package vetbad

import "testing"

func TestOne(t *testing.T) {
	if One() != 1 {
		t.Fatal("one")
	}
}
G
cat > usesbroken/u.go <<'G'
package usesbroken

import "example.com/demo/broken"

// Quarter returns n divided by four.
func Quarter(n int) int { return broken.Half(broken.Half(n)) }
G
cat > usesbroken/u_test.go <<'G'
package usesbroken

import "testing"

func TestQuarter(t *testing.T) {
	if Quarter(8) != 2 {
		t.Fatal("bad")
	}
}
G
cat > failing/round.go <<'G'
package failing

// Round rounds n to the nearest multiple of m.
func Round(n, m int) int { return n / m * m }
G
cat > failing/round_test.go <<'G'
package failing

import "testing"

func TestRound(t *testing.T) {
	cases := []struct{ n, m, want int }{{10, 10, 10}, {15, 10, 20}, {4, 5, 5}}
	for _, c := range cases {
		if got := Round(c.n, c.m); got != c.want {
			t.Errorf("Round(%d, %d) = %d, want %d", c.n, c.m, got, c.want)
		}
	}
}

func TestRoundExact(t *testing.T) {
	if Round(20, 10) != 20 {
		t.Fatal("Round(20, 10) != 20")
	}
}
G
record go_test_json_build_fail $W/gojson "go test -json ./..."
# the same with build errors printed as text on stderr ahead of the events, as before Go 1.24
record go_test_json_build_text $W/gojson "GODEBUG=gotestjsonbuildtext=1 go test -json ./..."
record go_build_json $W/gojson "go build -json ./..."
# go vet -json: one JSON object per package, keyed by package and analyzer, with absolute paths
# (the scratch directory becomes /home/dev/work); a package with two analyzers' findings, one with
# three findings of one analyzer, and a clean one (an empty object). vet -json exits 0 on findings.
mkdir -p $W/vetjson/fmtbad $W/vetjson/lockbad $W/vetjson/clean
cd $W/vetjson && printf 'module example.com/vetdemo\n\ngo 1.22\n' > go.mod
cat > fmtbad/f.go <<'G'
package fmtbad

import "fmt"

// Show prints n and s.
func Show(n int, s string) {
	fmt.Printf("%d\n", s)
	fmt.Printf("%s %s\n", n)
	fmt.Println("done\n")
}
G
cat > lockbad/l.go <<'G'
package lockbad

import "sync"

// Counter counts under a lock.
type Counter struct {
	mu sync.Mutex
	n  int
}

// Get returns the count, copying the lock by value.
func (c Counter) Get() int { return c.n }

// Shift shifts too far.
func Shift() int8 {
	var v int8 = 1
	return v << 9
}
G
cat > clean/c.go <<'G'
package clean

// One returns one.
func One() int { return 1 }
G
record go_vet_json $W/vetjson "go vet -json ./..."
# go vet as text: one "file:line:col: message" line a finding (Go 1.26 prints no "# pkg" line ahead
# of findings, only ahead of a package that does not compile). Eighty printf findings with one
# message in two packages, differing only in their line, and a few of other analyzers (copylocks,
# shift, structtag, unreachable) and a clean package; each is a place to fix. vet exits 1.
mkdir -p $W/vettext/report $W/vettext/export $W/vettext/clean
cd $W/vettext && printf 'module example.com/vettext\n\ngo 1.22\n' > go.mod
{
  printf 'package report\n\nimport "fmt"\n\n// Names prints each name as a number.\nfunc Names(name string) {\n'
  for i in $(seq 1 48); do printf '\tfmt.Printf("%%d\\n", name)\n'; done
  printf '}\n'
} > report/names.go
cat > report/lock.go <<'G'
package report

import "sync"

// Totals sums under a lock.
type Totals struct {
	mu sync.Mutex
	n  int
}

// Get copies the lock by value.
func (t Totals) Get() int { return t.n }

// Wide shifts too far.
func Wide() int8 {
	var v int8 = 1
	return v << 9
}
G
{
  printf 'package export\n\nimport "fmt"\n\n// Rows prints each row as a number.\nfunc Rows(name string) {\n'
  for i in $(seq 1 32); do printf '\tfmt.Printf("%%d\\n", name)\n'; done
  printf '}\n'
} > export/rows.go
cat > export/tag.go <<'G'
package export

// Row has a malformed struct tag.
type Row struct {
	ID int `json:id`
}

// Done returns before its last statement.
func Done() int {
	return 1
	panic("unreachable")
}
G
cat > clean/c.go <<'G'
package clean

// One returns one.
func One() int { return 1 }
G
record go_vet_text $W/vettext "go vet ./..."
# python
mkdir -p $W/py/tests && cd $W/py && cat > tests/test_math.py <<'P'
import pytest

def helper(x):
    return inner(x)

def inner(x):
    return x["missing"]

@pytest.mark.parametrize("n", range(12))
def test_square(n):
    assert n * n >= 0

def test_wrong():
    assert 2 + 2 == 5, "math is broken"

def test_error():
    helper({})
P
mkdir -p $W/bin && ln -sf "$(command -v python3)" $W/bin/python
PATH=$W/bin:$PATH record pytest_fail $W/py "python -m pytest tests"
cat > deep.py <<'P'
def a(n):
    return b(n)
def b(n):
    return c(n)
def c(n):
    if n == 0:
        raise ValueError("bad value: n reached zero")
    return a(n - 1)
print("starting run")
a(6)
P
record python_traceback $W/py "python3 deep.py"
# node
mkdir -p $W/js && cd $W/js && cat > app.js <<'J'
console.log("loading 3 modules");
function parse(cfg) { return cfg.items.map((i) => i.name.trim()); }
function main() { return parse({ items: [{ name: " a " }, {}] }); }
main();
J
record node_error $W/js "node app.js"
# inventories and searches
mkdir -p $W/tree && cd $W/tree && for d in cmd internal/api internal/store internal/store/sqlite pkg/util web/static; do mkdir -p $d; for i in $(seq 1 9); do echo "package x // $d $i" > $d/file_$i.go; done; done
for i in $(seq 1 25); do echo "func Handle$i() { log.Printf(\"handler $i ready\") }" >> internal/api/handlers.go; done
record find_go $W/tree "find . -name '*.go' | sort"
record ls_long $W/tree/internal/api "ls -la"
record ls_recursive $W/tree "ls -R"
record du_dirs $W/tree "du -sh */* | sort -k2"
record grep_rn $W/tree "grep -rn 'handler' ."
record tar_list $W "tar -cvf /dev/null tree"
# logs, repeats, progress
record repeated_lines $W "for i in \$(seq 1 40); do echo \"connecting to db at 10.0.0.\$((i % 3)) (attempt \$i)\"; done; echo 'giving up: connection refused'; exit 1"
record progress_bar $W "for i in \$(seq 0 10 100); do printf '\rdownloading model.bin %3d%%' \$i; done; printf '\nsaved model.bin (42 MB)\n'"
record ansi_colors $W/repo "git -c color.ui=always log --oneline --graph --decorate"
# help
record help_git_commit $W "git commit -h"
record help_ls $W "ls --help"
# generic fallback
record generic_seq $W "seq 1 400 | sed 's/^/processed record /'"
rm -rf "$W"
