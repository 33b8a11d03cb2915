#!/usr/bin/env python3
"""Writes the C++ code blocks of a Markdown file as one translation unit, so the build compiles them.

    extract_snippets.py DOC.md OUT.cc

Every ```cpp block is compiled, in the document's order, so a block sees the declarations of the
blocks above it. A block is at namespace scope unless the comment `<!-- snippet: function -->`
stands on a line of its own just above it: then it is the body of a function of its own (for
statements). `<!-- snippet: skip -->` leaves a block out (say, one that shows code that must not
compile). Its #include lines go to the top of the unit, and a `#pragma once` (a header shown as
a block) is left out. `#line` directives point compile errors at the document's own lines.
"""
import pathlib
import re
import sys

MARKER = re.compile(r"^<!--\s*snippet:\s*(function|skip)\s*-->\s*$")


def blocks(lines):
    """Yields (mode, first line number, block lines) for each ```cpp block."""
    mode, i = "namespace", 0
    while i < len(lines):
        line = lines[i]
        marker = MARKER.match(line.strip())
        if marker:
            mode = marker.group(1)
        elif line.strip() == "```cpp":
            start = i + 1
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            if i == len(lines):
                sys.exit(f"a ```cpp block opened on line {start} is not closed")
            yield mode, start + 1, lines[start:i]
            mode = "namespace"
        elif line.strip():
            mode = "namespace"  # a marker applies only to the block right after it
        i += 1


def main():
    doc, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    lines = doc.read_text(encoding="utf-8").splitlines()
    includes, body = [], []
    for mode, first, code in blocks(lines):
        if mode == "skip":
            continue
        kept = []
        for offset, line in enumerate(code):
            if line.startswith("#include") or line.strip() == "#pragma once":
                if line.startswith("#include") and line not in includes:
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


if __name__ == "__main__":
    main()
