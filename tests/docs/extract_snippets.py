#!/usr/bin/env python3
"""Compiles a Markdown file's code: its C++ blocks as one translation unit, or a whole project.

    extract_snippets.py DOC.md OUT.cc
    extract_snippets.py --project DOC.md PROJECT_DIR COMMANDS.sh

Every ```cpp block is compiled, in the document's order, so a block sees the declarations of the
blocks above it. A block is at namespace scope unless the comment `<!-- snippet: function -->`
stands on a line of its own just above it: then it is the body of a function of its own (for
statements). `<!-- snippet: skip -->` leaves a block out (say, one that shows code that must not
compile). Its #include lines go to the top of the unit, and a `#pragma once` (a header shown as
a block) is left out, as is an `#include "NAME"` of a file the document shows (below).

A document that is a project (the tutorial) names its files: a section whose heading ends in
(`NAME`) shows the file NAME in its ```cpp blocks, and its ```cmake block is CMakeLists.txt.
--project writes those files into PROJECT_DIR as a user following the document would, and the
```sh blocks marked `<!-- snippet: commands -->` (how to build and run it) into COMMANDS.sh, so the
project is built and run on its own against an installed package.
"""
import pathlib
import re
import sys

MARKER = re.compile(r"^<!--\s*snippet:\s*(function|skip|commands)\s*-->\s*$")
FILE_HEADING = re.compile(r"^#+ .*\(`([A-Za-z0-9_.]+)`\)\s*$")
FENCE = re.compile(r"^```(\w*)$")


def blocks(lines):
    """Yields (language, mode, file, first line number, block lines) for each fenced block; file
    is the name its section's heading gives, or None."""
    mode, file, i = "namespace", None, 0
    while i < len(lines):
        line = lines[i]
        marker = MARKER.match(line.strip())
        fence = FENCE.match(line.strip())
        if re.match(r"^#{1,6} ", line):
            heading = FILE_HEADING.match(line)
            file = heading.group(1) if heading else None
        if marker:
            mode = marker.group(1)
        elif fence:
            start = i + 1
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            if i == len(lines):
                sys.exit(f"a ```{fence.group(1)} block opened on line {start} is not closed")
            yield fence.group(1), mode, file, start + 1, lines[start:i]
            mode = "namespace"
        elif line.strip():
            mode = "namespace"  # a marker applies only to the block right after it
        i += 1


def write_unit(doc, lines, out):
    shown = {file for _, _, file, _, _ in blocks(lines) if file}
    includes, body = [], []
    for language, mode, _, first, code in blocks(lines):
        if language != "cpp" or mode == "skip":
            continue
        kept = []
        for line in code:
            local = re.match(r'^#include "([^"]+)"', line)
            if line.startswith("#include") or line.strip() == "#pragma once":
                if (line.startswith("#include") and line not in includes and
                        not (local and local.group(1) in shown)):
                    includes.append(line)
                kept.append("")  # keeps the #line numbering
            else:
                kept.append(line)
        if mode == "function":
            body.append(f"[[maybe_unused]] void SnippetAtLine{first}() {{")
        body.append(f'#line {first} "{doc.name}"')
        body.extend(kept)
        if mode == "function":
            body.append("}")
    text = [f"// Generated from {doc.name} by extract_snippets.py: do not edit.", *includes,
            "namespace doc_snippets {", *body, "}  // namespace doc_snippets", ""]
    out.write_text("\n".join(text), encoding="utf-8")


def write_project(doc, lines, out_dir, commands_file):
    files, commands = {}, []
    for language, mode, file, first, code in blocks(lines):
        if mode == "commands":
            if language != "sh":
                sys.exit(f"{doc}: the commands marker on line {first - 2} is above a ```{language} "
                         "block, not a ```sh one")
            commands.extend(code)
            continue
        if language not in ("cpp", "cmake") or mode == "skip":
            continue
        name = "CMakeLists.txt" if language == "cmake" else file
        if name is None:
            sys.exit(f"{doc}: the ```cpp block on line {first} is in no file's section "
                     "(a heading ending in (`NAME`))")
        files.setdefault(name, []).extend(code)
    if "CMakeLists.txt" not in files:
        sys.exit(f"{doc}: no ```cmake block, so no CMakeLists.txt")
    if not commands:
        sys.exit(f"{doc}: no ```sh block marked <!-- snippet: commands -->")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, code in files.items():
        (out_dir / name).write_text("\n".join(code) + "\n", encoding="utf-8")
    commands_file.write_text("\n".join(["set -euxo pipefail", *commands]) + "\n", encoding="utf-8")


def main():
    args = sys.argv[1:]
    project = args[:1] == ["--project"]
    if project:
        args = args[1:]
    if len(args) != (3 if project else 2):
        sys.exit(__doc__)
    doc, out = pathlib.Path(args[0]), pathlib.Path(args[1])
    lines = doc.read_text(encoding="utf-8").splitlines()
    if project:
        write_project(doc, lines, out, pathlib.Path(args[2]))
    else:
        write_unit(doc, lines, out)


if __name__ == "__main__":
    main()
