"""Parts of docs/bench.md that a script other than bench.py writes, each
between `<!-- NAME bench: begin -->` and `<!-- NAME bench: end -->`:
`put` replaces one (or adds it at the end), `kept` gives every one of a
file's, so that bench.py, which rewrites the file, keeps them."""
import os
import re


def markers(name):
    return f"<!-- {name} bench: begin -->", f"<!-- {name} bench: end -->"


def put(path, name, lines):
    begin, end = markers(name)
    block = "\n".join([begin, *lines, end])
    text = open(path).read() if os.path.exists(path) else "# mcpcert benchmarks\n"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    open(path, "w").write(text)


def kept(path):
    if not os.path.exists(path):
        return []
    text = open(path).read()
    return [m.group(0) for m in re.finditer(r"<!-- (\S+) bench: begin -->.*?<!-- \1 bench: end -->", text, re.S)]
