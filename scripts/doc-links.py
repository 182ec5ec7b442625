#!/usr/bin/env python3
"""Check the relative links of README.md and docs/*.md.

Every link that is not a URL (http:, https:, mailto:) must name a file or
folder that exists, relative to the page it is on; a `#anchor` (on its own,
or after a Markdown file's path) must name a heading of that page, slugged
as GitHub does: lower case, spaces to '-', every character that is not a
letter, digit, '-' or '_' dropped, and '-1', '-2'… added to repeated slugs.
Links inside code (fenced blocks and `code spans`) are not links. Exit 1 on
any broken link, naming the file and line; 0 otherwise.

usage: scripts/doc-links.py [FILE.md…]   (default: README.md and docs/*.md)
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) and ![alt](target); the target ends at white space or ')'.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_ID = re.compile(r"<a\s[^>]*(?:id|name)=\"([^\"]+)\"", re.I)
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def lines_outside_code(text):
    """(line number, line) for every line outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
                continue
            if mark.startswith(fence):
                fence = None
                continue
        if fence is None:
            yield n, line


def slug(heading):
    """GitHub's anchor for a heading's text (github-slugger)."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = re.sub(r"(\*+|(?<!\w)_+|_+(?!\w))", "", text)  # emphasis markers
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen = {}
        found = set()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line in lines_outside_code(text):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                k = seen.get(base, 0)
                seen[base] = k + 1
                found.add(base if k == 0 else f"{base}-{k}")
            for a in HTML_ID.findall(line):
                found.add(a)
        _anchors[path] = found
    return _anchors[path]


def check(page):
    problems = []
    with open(page, encoding="utf-8") as f:
        text = f.read()
    here = os.path.dirname(page)
    for n, line in lines_outside_code(text):
        bare = CODE_SPAN.sub("", line)
        targets = [m.group(1) for m in LINK.finditer(bare)]
        m = REFDEF.match(bare)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if not t or re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I):
                continue  # a URL (http:, https:, mailto:) or empty
            path, _, anchor = t.partition("#")
            dest = os.path.normpath(os.path.join(here, path)) if path else page
            where = f"{os.path.relpath(page, ROOT)}:{n}"
            if not os.path.exists(dest):
                problems.append(f"{where}: {t}: no such file {os.path.relpath(dest, ROOT)}")
                continue
            if anchor:
                if os.path.isdir(dest) or not dest.endswith(".md"):
                    if not dest.endswith(".md"):
                        continue  # an anchor into a non-Markdown file (e.g. a line of code): not checked
                    problems.append(f"{where}: {t}: an anchor into a folder")
                    continue
                if anchor not in anchors(dest):
                    problems.append(f"{where}: {t}: no heading #{anchor} in {os.path.relpath(dest, ROOT)}")
    return problems


def main(argv):
    pages = argv[1:] or [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    pages = [os.path.abspath(p) for p in pages]
    problems = []
    for p in pages:
        problems += check(p)
    for p in problems:
        print(p)
    print(f"doc-links: {len(pages)} pages, {len(problems)} broken link(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
