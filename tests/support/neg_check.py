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
  neg_check.py self-test                           the checker on canned g++ and clang output
"""
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile


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
    if argv[1:] == ["self-test"]:
        return self_test()
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


# Output of both compilers in the shape they print it (shortened): the file
# a.cpp's misuse as g++ reports it (its path only in the "required from"
# chain), b.cpp's as clang does (its namespace only in a note's type), an
# error that names no file, and one of a file whose name starts like b's.
CANNED = """\
In file included from /src/include/taco/async.hpp:30,
                 from /build/neg_pch/neg_pch.hpp:1:
/src/include/taco/channel.hpp: In instantiation of 'class taco::channel<void>':
/src/tests/neg/a.cpp:8:25:   required from here
/src/include/taco/channel.hpp:145:25: error: static assertion failed: a channel carries values
  145 |     static_assert(!std::is_void_v<T>, "a channel carries values");
/src/include/taco/channel.hpp:145:25: note: '!(bool)std::is_void_v<void>' evaluates to false
In file included from /src/include/mesh/mesh.hpp:3:
/src/include/taco/async.hpp:87:9: error: static_assert failed due to requirement '!has_timeout' "taco::timeout needs a future"
        static_assert(!Mods::has_timeout,
/src/include/taco/async.hpp:193:45: note: in instantiation of 'taco::detail::invoke<neg_b::source, long>' requested here
/src/include/taco/group.hpp:50:3: error: at most one completion (a stray error: no file's path, no file's namespace)
/src/include/taco/async.hpp:90:9: error: static_assert failed "taco::timeout needs a future, in b_two"
/src/include/taco/async.hpp:193:45: note: in instantiation of 'taco::detail::invoke<neg_b_two::source, long>' requested here
"""


def self_test():
    """The checker's own test: which diagnostics it credits to which file,
    and when it compiles a file alone. A checker that credited a file with
    another's error would let a misuse that compiles pass unnoticed."""
    failures = []

    def check(what, ok):
        if not ok:
            failures.append(what)

    groups = diagnostics(CANNED)
    check(f"4 diagnostics in the canned output, not {len(groups)}", len(groups) == 4)
    if len(groups) == 4:
        check("a's g++ diagnostic keeps its context (included from, instantiation, required from)",
              groups[0].startswith("In file included from") and "/neg/a.cpp:8:25:   required from here" in groups[0])
        check("clang's notes stay with their error", "neg_b::source" in groups[1])
        owners = [[stem for stem in ("a", "b", "b_two") if caused_by(g, stem)] for g in groups]
        check(f"credited: {owners}, expected [['a'], ['b'], [], ['b_two']]", owners == [["a"], ["b"], [], ["b_two"]])

    py = sys.executable
    def compiler(output, status):  # a stand-in for a lone compile
        return [py, "-c", f"import sys; print({output!r}); sys.exit({status})"]

    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "batch.log")
        files = {}
        for stem in ("a", "b", "c"):
            files[stem] = os.path.join(tmp, "neg", stem + ".cpp")
            os.makedirs(os.path.dirname(files[stem]), exist_ok=True)
            open(files[stem], "w").close()

        def run_main(argv):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = main(["neg_check.py"] + argv)
            return status, out.getvalue()

        status, _ = run_main(["batch", log, "--"] + compiler(CANNED.replace("/src/tests", tmp), 1))
        check(f"a batch that fails is the expected outcome (status {status})", status == 0)
        check("the batch output is kept", os.path.exists(log) and "/neg/a.cpp:8:25" in open(log).read())
        status, _ = run_main(["batch", os.path.join(tmp, "x.log"), "--"] + compiler("", 0))
        check("a batch that compiles has lost its misuses: fails", status == 1)
        past = os.path.getmtime(log) - 100
        for f in files.values():
            os.utime(f, (past, past))

        never = compiler("(the lone compile ran)", 0)
        status, out = run_main(["case", log, files["a"], "a channel carries values", "--"] + never)
        check("a's own diagnostic passes a's test without a lone compile", status == 0 and "lone compile ran" not in out)
        status, out = run_main(["case", log, files["b"], "timeout needs a future", "--"] + never)
        check("b's diagnostic found through its namespace", status == 0 and "lone compile ran" not in out)
        # c's expected text is in the stray error and in a's and b's: none of
        # them is c's, so c compiles alone, and that decides.
        for regex in ("at most one completion", "a channel carries values", "timeout needs a future"):
            status, out = run_main(["case", log, files["c"], regex, "--"] + compiler("no error at all", 0))
            check(f"another file's or no file's diagnostic ('{regex}') does not pass c's test", status == 1)
        status, out = run_main(["case", log, files["c"], "at most one completion", "--"] +
                               compiler("c.cpp:3:1: error: at most one completion", 1))
        check("c passes by its lone compile", status == 0 and "compiled alone" in out)
        status, out = run_main(["case", log, files["a"], "nothing like it", "--"] + compiler("a.cpp: error: other", 1))
        check("a diagnostic of a's that does not match falls back, and fails", status == 1)
        future = os.path.getmtime(log) + 100
        os.utime(files["a"], (future, future))
        status, out = run_main(["case", log, files["a"], "a channel carries values", "--"] + never)
        check("a batch output older than the file is not read", status == 1 and "older than" in out)

    for f in failures:
        print("FAILED:", f)
    print(f"neg_check.py self-test: {'all passed' if not failures else f'{len(failures)} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
