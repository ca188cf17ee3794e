#!/usr/bin/env python3
"""The negative-compile tests' checker (tests/CMakeLists.txt).

All the misuses compile together once, in one TU where each file sits in a
namespace of its own (neg_<file>): loading the precompiled framework was most
of each lone compile's time. Then each test looks in that compile's output for
the diagnostics its own file caused, and passes when one of them says what the
test expects: a diagnostic counts as the file's when its chain of locations
names the file, or a type names the file's namespace, so it comes from that
file's code, which alone would fail the same way. Where none matches (the
compilers instantiate a template once per TU, so a file whose misuse repeats
another's finds its error reported under the other's name), the file is
compiled alone, as before the batch, and that compile's output decides.

  neg_check.py batch LOG -- COMPILER ARGS...       the batch compile, output to LOG
  neg_check.py case LOG FILE REGEX -- COMPILER ARGS...  one file's test (ARGS compile it alone)
"""
import os
import re
import subprocess
import sys


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    return result.returncode, result.stdout


def diagnostics(text):
    """The output cut into diagnostics: the context lines before an error
    (g++'s "In instantiation of ... required from here", both compilers' "In
    file included from"), the error, and the notes and source lines after it
    (clang's "in instantiation of ... requested here")."""
    starts_context = re.compile(r"In file included from |\S+: In |\S+:\d+:\d+:\s+required (from|by) ")
    groups, current, has_error = [], [], False
    for line in text.splitlines():
        is_error = re.search(r"\berror:", line) is not None
        if has_error and (is_error or starts_context.match(line)):
            groups.append(current)
            current, has_error = [], False
        current.append(line)
        has_error = has_error or is_error
    if has_error:
        groups.append(current)
    return ["\n".join(g) for g in groups]


def caused_by(group, stem):
    # Its file in the chain of locations, or its namespace in a type.
    return re.search(rf"/neg/{re.escape(stem)}\.cpp:", group) or re.search(rf"\bneg_{re.escape(stem)}::", group)


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    split = argv.index("--")
    args, command = argv[1:split], argv[split + 1:]
    if args[:1] == ["batch"] and len(args) == 2:
        status, out = run(command)
        with open(args[1], "w") as log:
            log.write(out)
        errors = len(diagnostics(out))
        print(f"the batch compile: exit {status}, {errors} errors (in {args[1]})")
        # Every file is a misuse: a batch that compiles has lost them all.
        return 1 if status == 0 else 0
    if args[:1] != ["case"] or len(args) != 4:
        sys.exit(__doc__)
    log, file, regex = args[1:]
    stem = file.rsplit("/", 1)[-1].removesuffix(".cpp")
    expected = re.compile(regex, re.DOTALL)
    try:
        if os.path.getmtime(log) < os.path.getmtime(file):
            raise OSError(f"{log} is older than {file}")
        with open(log) as f:
            batch = f.read()
    except OSError as e:
        batch = ""
        print(f"no batch output to read ({e}): compiling alone")
    mine = [g for g in diagnostics(batch) if caused_by(g, stem)]
    for group in mine:
        if expected.search(group):
            print(f"{stem}: the batch compile ({log}) reports, as expected:\n{group}")
            return 0
    if batch:
        print(f"{stem}: {len(mine)} diagnostics of its own in the batch compile, none matching "
              f"'{regex}': compiling alone")
    status, out = run(command)
    print(out)
    if expected.search(out):
        print(f"{stem}: compiled alone (exit {status}), the output matches '{regex}'")
        return 0
    print(f"{stem}: compiled alone (exit {status}), nothing matches '{regex}'")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
