#!/usr/bin/env python3
"""Check that docs/tutorial.md shows what the tree really does.

1. Every ```cpp block is a verbatim excerpt of one source under --sources
   (a line that is only `// ...` separates excerpts of the same file, in order).
2. Every line `$ command` of a ```console block runs (bash, from the source
   directory, `build` meaning the build directory) and exits 0; the lines up
   to the next command or the block's end are its expected stdout. In them
   `~12.3` stands for any number (timings) and a line `...` for any lines.
   A tutorial that shows commands outside ```console blocks fails: those
   would not be run.

Commands that need MPI (mpirun, tutorial_step5) are skipped with a message
when --mpirun is not given: the reason is --mpi-skip.

  check_tutorial.py --tutorial docs/tutorial.md --sources examples
      --source-dir . --build-dir build --cmake cmake [--mpirun mpirun] [--mpi-skip REASON]
"""
import argparse
import pathlib
import re
import subprocess
import sys
import time


def fences(text):
    """(language, first line number, lines) of every fenced block."""
    blocks, lang, body, start = [], None, [], 0
    for no, line in enumerate(text.splitlines(), 1):
        if lang is None:
            m = re.match(r"^```(\w*)\s*$", line)
            if m:
                lang, body, start = m.group(1), [], no + 1
        elif line.startswith("```"):
            blocks.append((lang, start, body))
            lang = None
        else:
            body.append(line)
    if lang is not None:
        sys.exit(f"tutorial: the block opened at line {start - 1} is not closed")
    return blocks


def excerpt_of(pieces, sources):
    """The source that holds every piece verbatim, in order, or None."""
    for path, text in sources.items():
        text, at = "\n" + text, 0
        for piece in pieces:
            found = text.find("\n" + piece, at)  # whole lines only
            if found < 0:
                break
            at = found + len(piece)
        else:
            return path
    return None


def check_snippets(blocks, sources):
    failures, count = [], 0
    for lang, line, body in blocks:
        if lang != "cpp":
            continue
        count += 1
        pieces, piece = [], []
        for l in body:
            if l.strip() == "// ...":
                pieces.append(piece)
                piece = []
            else:
                piece.append(l)
        pieces.append(piece)
        pieces = ["\n".join(p) + "\n" for p in pieces if p]
        path = excerpt_of(pieces, sources)
        if path:
            print(f"ok   snippet at line {line}: {path.name}")
        else:
            failures.append(f"snippet at line {line} is not a verbatim excerpt of any of "
                            f"{', '.join(p.name for p in sources)}")
    return failures, count


def commands(blocks):
    """(line, command, expected lines) of every `$ ` line of a console block."""
    out = []
    for lang, line, body in blocks:
        if lang != "console":
            continue
        current = None
        for i, l in enumerate(body):
            if l.startswith("$ "):
                current = (line + i, l[2:].strip(), [])
                out.append(current)
            elif current is not None:
                current[2].append(l)
    return out


NUMBER = r"[-+]?[0-9]+(?:\.[0-9]+)?"


def matches(expected, actual):
    """Whether actual (lines) fits expected (lines with ~N and ... wildcards)."""
    pattern = []
    for e in expected:
        if e.strip() == "...":
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            parts = re.split(r"~" + NUMBER, e.rstrip())
            pattern.append(NUMBER.join(re.escape(p) for p in parts) + r"[ \t]*\n")
    text = "".join(a.rstrip() + "\n" for a in actual)
    return re.fullmatch("".join(pattern), text) is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tutorial", required=True, type=pathlib.Path)
    ap.add_argument("--sources", required=True, type=pathlib.Path)
    ap.add_argument("--source-dir", required=True, type=pathlib.Path)
    ap.add_argument("--build-dir", required=True, type=pathlib.Path)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--mpirun")
    ap.add_argument("--mpi-skip", default="")
    args = ap.parse_args()

    blocks = fences(args.tutorial.read_text())
    failures = [f"line {line}: a ```{lang} block shows commands that no test runs: make it ```console with `$ ` lines"
                for lang, line, _ in blocks if lang in ("sh", "bash", "shell")]

    sources = {p: p.read_text() for p in sorted(args.sources.rglob("*"))
               if p.suffix in (".cpp", ".hpp") and p.is_file()}
    snippet_failures, snippets = check_snippets(blocks, sources)
    failures += snippet_failures

    runs = commands(blocks)
    build = str(args.build_dir.resolve())
    skipped = 0
    for line, command, expected in runs:
        needs_mpi = "mpirun" in command or "tutorial_step5" in command
        if needs_mpi and not args.mpirun:
            print(f"SKIPPED (line {line}) {command}: {args.mpi_skip or 'no mpirun given'}")
            skipped += 1
            continue
        # `build` as a path of its own (build, build/...) is the build tree.
        real = re.sub(r"(?<![\w./-])build(?=/|\s|$)", build, command)
        real = re.sub(r"^cmake(?=\s)", args.cmake, real)
        if needs_mpi:
            real = re.sub(r"^mpirun(?=\s)", args.mpirun, real)
        started = time.monotonic()
        try:
            done = subprocess.run(["bash", "-c", real], cwd=args.source_dir, capture_output=True, text=True,
                                  timeout=240)
        except subprocess.TimeoutExpired:
            failures.append(f"line {line}: `{command}` took more than 240 s")
            continue
        actual = done.stdout.splitlines()
        if done.returncode != 0:
            failures.append(f"line {line}: `{command}` exited {done.returncode}\n"
                            f"--- stdout\n{done.stdout}--- stderr\n{done.stderr}")
        elif expected and not matches(expected, actual):
            failures.append(f"line {line}: `{command}` printed\n{done.stdout}--- where the tutorial shows\n"
                            + "\n".join(expected))
        else:
            print(f"ok   (line {line}, {time.monotonic() - started:.1f} s) {command}")
            for a in actual:
                print(f"       {a}")

    if snippets == 0 or len(runs) == 0:
        failures.append(f"found {snippets} cpp snippets and {len(runs)} commands: is this the tutorial?")
    print(f"{snippets} snippets, {len(runs)} commands ({skipped} skipped), {len(failures)} failures")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
