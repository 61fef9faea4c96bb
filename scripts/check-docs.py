#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the product documentation against the tree it describes.

    scripts/check-docs.py [ROOT]      check ROOT (default: the repository this script is in)
    scripts/check-docs.py --self-test check that the checks fail on a broken tree

In README.md, ARCHITECTURE.md and docs/*.md (not docs/experiments/, whose paths are a record of
their day), it fails when
  - a relative link [text](target) or ![alt](target) names a file or folder that does not exist,
    or an anchor (#heading) that no heading of the target Markdown file makes;
  - a path named in inline backticks does not exist: a word that starts with one of the
    repository's top-level folders or files (`src/core/policy.h`, `bash scripts/test-all.sh`),
    or with one of src/'s folders (`core/policy.h`, read under src/); words under build/ are
    build outputs and words with a placeholder (<x>, *, $, {) are patterns, so neither is read;
  - README.md is longer than README_MAX_LINES.
It prints each problem as file:line and exits 1 if there is one. The docs_check test runs it.
"""
import os
import re
import sys
import tempfile

README_MAX_LINES = 300


TOP_LEVEL = ("src/", "include/", "tests/", "scripts/", "bench/", "delphi/", "demo/", "docs/",
             "cmake/", "msvc/", ".ci/")
TOP_FILES = ("README.md", "ARCHITECTURE.md", "LICENSE", "CHANGELOG.md", "CMakeLists.txt",
             "CMakePresets.json", "fastmm-c.sln", ".clang-format")
SRC_FOLDERS = ("core/", "modes/", "report/", "entry/", "api/", "prim/", "asm_shared/", "win32/", "win64/")

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`([^`]+)`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def doc_files(root):
    files = [f for f in ("README.md", "ARCHITECTURE.md") if os.path.exists(os.path.join(root, f))]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += sorted("docs/" + f for f in os.listdir(docs) if f.endswith(".md"))
    return files


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def slug(heading):
    """The anchor GitHub makes of a heading."""
    s = re.sub(r"`|\*\*|\*|_(?=\W)|(?<=\W)_", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        return {slug(m.group(2)) for _, line in prose_lines(f.read())
                if (m := HEADING.match(line))}


def exists(root, rel, problems, where):
    if os.path.exists(os.path.join(root, rel)):
        return True
    problems.append(f"{where}: {rel} does not exist")
    return False


def check_link(root, doc, target, problems, where):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
        return
    path, _, anchor = target.partition("#")
    if path:
        rel = os.path.normpath(os.path.join(os.path.dirname(doc), path))
        if not exists(root, rel, problems, where):
            return
    else:
        rel = doc
    if anchor and rel.endswith(".md") and os.path.isfile(os.path.join(root, rel)):
        if anchor not in anchors(os.path.join(root, rel)):
            problems.append(f"{where}: {rel} has no heading for #{anchor}")


def code_paths(code):
    for word in code.split():
        word = word.strip(",.;:()'\"")
        if not word or re.search(r"[<>*${}]", word) or word.startswith("build/"):
            continue
        word = re.sub(r":\d+(-\d+)?$", "", word)  # file:line
        if word.startswith(TOP_LEVEL) or word in TOP_FILES:
            yield word
        elif word.startswith(SRC_FOLDERS) and "/" in word[:-1]:
            yield "src/" + word


def check_doc(root, doc, problems):
    with open(os.path.join(root, doc), encoding="utf-8") as f:
        text = f.read()
    for n, line in prose_lines(text):
        where = f"{doc}:{n}"
        for m in LINK.finditer(line):
            check_link(root, doc, m.group(1), problems, where)
        for m in INLINE_CODE.finditer(LINK.sub("", line)):
            for rel in code_paths(m.group(1)):
                exists(root, rel.rstrip("/"), problems, where)
    if doc == "README.md":
        lines = text.count("\n")
        if lines > README_MAX_LINES:
            problems.append(f"README.md: {lines} lines, more than {README_MAX_LINES}")


def check(root):
    problems = []
    docs = doc_files(root)
    if "README.md" not in docs:
        problems.append("README.md is missing")
    for doc in docs:
        check_doc(root, doc, problems)
    return docs, problems


def self_test():
    """Each kind of fault on its own in a small tree must fail; the tree without them must pass."""
    good = ("# T\n\n## A part\n\nSee [the part](#a-part), [docs](docs/x.md#x-y), "
            "`src/a.c`, `bash scripts/b.sh`, `core/a.h`, `build/out.dll`, `tests/<n>.c`.\n"
            "```sh\nscripts/not-checked-in-a-fence.sh\n```\n")
    faults = {
        "a broken link": good + "[gone](docs/gone.md)\n",
        "a broken anchor": good + "[gone](docs/x.md#nowhere)\n",
        "a broken local anchor": good + "[gone](#nowhere)\n",
        "a broken backtick path": good + "`src/gone.c`\n",
        "a broken path in a command": good + "`bash scripts/gone.sh --all`\n",
        "a broken src/ folder path": good + "`core/gone.h`\n",
        "a README over the limit": good + "x\n" * README_MAX_LINES,
    }
    failed = 0
    for name, readme in [("the good tree", good)] + list(faults.items()):
        with tempfile.TemporaryDirectory() as root:
            for rel, text in (("src/a.c", ""), ("src/core/a.h", ""), ("scripts/b.sh", ""),
                              ("docs/x.md", "# X y\n"), ("README.md", readme)):
                os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            _, problems = check(root)
            want_fail = name != "the good tree"
            ok = bool(problems) == want_fail
            failed += not ok
            print(f"check-docs self-test: {name}: {'ok' if ok else 'WRONG'}"
                  f" ({'; '.join(problems) or 'no problem found'})")
    print(f"check-docs self-test: {len(faults) + 1} cases, {failed} wrong")
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    docs, problems = check(os.path.abspath(root))
    for p in problems:
        print(f"check-docs: {p}")
    print(f"check-docs: {len(docs)} files read, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
