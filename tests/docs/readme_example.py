#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compiles and runs the README's C example against the native library.

    readme_example.py README CC INCLUDE_DIR LIBRARY WORK_DIR

The example is the ```c block between the markers <!-- readme-c-example --> and
<!-- /readme-c-example --> in README. It is compiled as C11 with -Wall -Wextra -Werror against
INCLUDE_DIR/fastmm.h, linked to LIBRARY (libfastmmc.so) and run; the test fails if the block is
missing, does not compile, or exits non-zero. The readme_c_example test runs it.
"""
import os
import re
import subprocess
import sys


def main(readme, cc, include_dir, library, work):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- readme-c-example -->\s*```c\n(.*?)```\s*<!-- /readme-c-example -->",
                  text, re.S)
    if not m:
        print("readme_example: no ```c block between the readme-c-example markers")
        return 1
    os.makedirs(work, exist_ok=True)
    source = os.path.join(work, "readme_example.c")
    exe = os.path.join(work, "readme_example")
    with open(source, "w", encoding="utf-8") as f:
        f.write(m.group(1))
    compile_cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", include_dir, source,
                   library, "-Wl,-rpath," + os.path.dirname(os.path.abspath(library)), "-o", exe]
    print("readme_example: " + " ".join(compile_cmd))
    if subprocess.call(compile_cmd) != 0:
        print("readme_example: the README's C example does not compile")
        return 1
    rc = subprocess.call([exe])
    print(f"readme_example: the example ran and exited with {rc}")
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
