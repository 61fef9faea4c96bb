#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs one of Debian's programs on a fixed piece of work twice, under the C library's malloc and
# with libfastmmc-malloc.so preloaded, and fails unless both runs succeed and print the same
# thing (and make the same files). The work is deterministic (fixed dates for git, no random
# data), so any difference is the allocator's doing.
#
#   debian_program.sh <libfastmmc-malloc.so> <python3|git|sqlite3|make|gcc|cxx|cxx_debug> [C++ program]
set -euo pipefail
lib=$1
what=$2
cxx_program=${3:-}
[ -f "$lib" ] || { echo "no library $lib" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The preload takes: the library is in the preloaded process's map.
maps=$(LD_PRELOAD=$lib cat /proc/self/maps)
if [[ $maps != *"$(basename "$lib")"* ]]; then
  echo "LD_PRELOAD=$lib did not load it" >&2
  exit 1
fi

# run_work <dir>: the work, in <dir>, printing what it shows.
run_work() {
  local dir=$1
  mkdir -p "$dir"
  cd "$dir"
  case $what in
  python3)
    cat >work.py <<'EOF'
import json, hashlib, gc
rows = [{"id": i, "name": "n%d" % (i * 7 % 1009), "tags": [str(j) for j in range(i % 13)]}
        for i in range(150000)]
text = json.dumps(rows, sort_keys=True)
back = json.loads(text)
index = {}
for r in back:
    index.setdefault(r["name"], []).append(r["id"])
big = [bytearray(range(256)) * (k % 50 + 1) for k in range(20000)]
s = "".join(str(x) for x in range(200000))
del big
gc.collect()
print(len(text), hashlib.sha256(text.encode()).hexdigest())
print(len(index), sum(len(v) for v in index.values()), sorted(index)[:3])
print(len(s), hashlib.md5(s.encode()).hexdigest())
EOF
    python3 work.py
    ;;
  git)
    export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid GIT_AUTHOR_DATE='2026-01-01T00:00:00Z'
    export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
    export GIT_CONFIG_NOSYSTEM=1 HOME=$dir
    git init -q -b main repo
    cd repo
    for i in $(seq 1 40); do
      seq "$i" 3000 >"file$i.txt"
    done
    git add .
    git commit -q -m first
    for i in $(seq 1 40 | sort -r | head -20); do
      seq 1 "$i" >>"file$i.txt"
    done
    git commit -q -am second
    git log --stat --format='%H %s'
    git diff HEAD~1 --stat | tail -1
    git gc -q
    git count-objects -v | grep -v size
    ;;
  sqlite3)
    sqlite3 db.sqlite <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
INSERT INTO t SELECT x, printf('name-%d-%s', x % 997, substr('abcdefghijklmnopqrstuvwxyz', 1 + x % 26)), (x * 7919) % 10007 FROM c;
CREATE INDEX t_name ON t(name);
SELECT count(*), sum(v), min(name), max(name) FROM t;
SELECT name, count(*), sum(v) FROM t GROUP BY name ORDER BY sum(v) DESC LIMIT 5;
SELECT group_concat(id) FROM (SELECT id FROM t WHERE name = 'name-5-g' ORDER BY id LIMIT 10);
UPDATE t SET v = v + 1 WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
VACUUM;
SELECT count(*), sum(v) FROM t;
EOF
    ;;
  make)
    cat >Makefile <<'EOF'
PARTS := $(foreach n,1 2 3 4 5 6 7 8 9 10 11 12,part$(n).txt)
all: joined.txt
	@wc -l < joined.txt
	@echo $(words $(PARTS)) parts: $(patsubst %.txt,%,$(PARTS))
joined.txt: $(PARTS)
	@cat $^ > $@
part%.txt:
	@seq 1 $$(( $* * 100 )) > $@
.PHONY: all
EOF
    make -s -j2
    make -s
    ;;
  gcc)
    cat >prog.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct node { struct node *next; char name[24]; };
int main(void) {
  struct node *head = NULL;
  for (int i = 0; i < 1000; i++) {
    struct node *n = malloc(sizeof *n);
    snprintf(n->name, sizeof n->name, "node %d", i);
    n->next = head;
    head = n;
  }
  unsigned long sum = 0;
  for (struct node *n = head; n != NULL; n = n->next)
    sum += strlen(n->name);
  printf("%lu\n", sum);
  return 0;
}
EOF
    gcc -O2 -Wall -c prog.c -o prog.o
    gcc prog.o -o prog
    ./prog
    sha256sum prog.o | cut -d' ' -f1
    ;;
  cxx)
    "$cxx_program"
    ;;
  cxx_debug)
    # Debug mode in every block (FASTMMC_DEBUG_MODE; the C library's malloc ignores it): the
    # program copied here, so that its event log (beside the program) is written here.
    cp "$cxx_program" ./program
    FASTMMC_DEBUG_MODE=1 ./program
    ;;
  *)
    echo "unknown program $what" >&2
    exit 1
    ;;
  esac
}

(run_work "$work/plain") >"$work/plain.out" 2>&1 || {
  echo "$what failed under the C library's malloc:" >&2
  cat "$work/plain.out" >&2
  exit 1
}
(export LD_PRELOAD=$lib; run_work "$work/fastmm") >"$work/fastmm.out" 2>&1 || {
  echo "$what failed with $lib preloaded:" >&2
  cat "$work/fastmm.out" >&2
  exit 1
}
if [ "$what" = cxx_debug ] && ! grep -q "FastMM-C memory leak report" "$work/fastmm"/program_*EventLog*; then
  echo "$what: no leak report from debug mode in $work/fastmm" >&2
  ls -la "$work/fastmm" >&2
  exit 1
fi
if ! diff -u "$work/plain.out" "$work/fastmm.out"; then
  echo "$what: the output differs with $lib preloaded" >&2
  exit 1
fi
lines=$(wc -l <"$work/plain.out")
echo "$what: the same $lines lines of output with and without $(basename "$lib")"
