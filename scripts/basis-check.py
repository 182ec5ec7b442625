#!/usr/bin/env python3
"""Check that every case's basis quote stands in its revision's own text.

Each case of `mcpcert list --json` names the sentence its level rests on
and where it stands (`<rev>/<document>#<anchor>` or
`schema/<rev>/schema.ts#<Type>`). This reads those documents from a
checkout of the specification repository (modelcontextprotocol/
modelcontextprotocol: docs/specification/<rev>/ and schema/<rev>/) and
reports every quote that is not in the document it names, once markup and
white space are folded. A quote may leave words out with `…`; each part
must then appear, in order.

    scripts/basis-check.py SPEC_REPO [MCPCERT]

A SEP (`seps/NNNN-….md#anchor`) is read from the spec repository's seps/
(skipped, saying so, when the checkout predates it). A source in an
extension's repository (`ext-NAME/PATH#anchor`) is read
from a checkout of it beside SPEC_REPO; without one it is said and skipped.
Cases whose basis is a fixture definition or a requirement set (mcpcert's
own words for what a scenario defines) are not quotations and are skipped.
Exit 1 if any quote is not found; 2 if SPEC_REPO is not such a checkout.
"""
import json, os, re, subprocess, sys


def fold(s):
    s = re.sub(r"</?[A-Za-z][^<>\n]*>", " ", s)          # tags (schema.mdx, components)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)     # [text](link) -> text
    s = re.sub(r"[\[\]]", "", s)
    s = re.sub(r"^\s*\*\s?", " ", s, flags=re.M)       # doc-comment margins
    s = re.sub(r"[*`_]", "", s)
    s = re.sub(r"(^|\s)(?:-|\d+\.)\s+", " ", s)         # list markers
    s = s.replace("\u2019", "'")
    return re.sub(r"\s+", " ", s).strip().lower()


def document(repo, source):
    """The file a basis source names, or None. An extension's text
    (`ext-tasks/specification/draft/tasks.md#…`) is read from a checkout of
    its repository beside SPEC_REPO (`../ext-tasks`)."""
    path = source.split("#", 1)[0]
    if path.startswith("ext-"):
        return os.path.join(os.path.dirname(os.path.abspath(repo)), path)
    if path.startswith("schema/") or path.startswith("seps/"):
        return os.path.join(repo, path)
    for ext in (".mdx", ".md", "/index.mdx"):
        p = os.path.join(repo, "docs/specification", path + ext)
        if os.path.isfile(p):
            return p
    return None


def anchors(path):
    """The heading slugs of a document (as the spec site makes them)."""
    out = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            h = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)).strip().lower()
            slug = re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", h))
            out.update({slug, slug.strip("_")})  # the site links `_meta` as #meta
    return out


def main():
    if len(sys.argv) < 2 or not os.path.isdir(os.path.join(sys.argv[1], "docs/specification")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    repo = sys.argv[1]
    exe = sys.argv[2] if len(sys.argv) > 2 else "mcpcert"
    cases = json.loads(subprocess.run([exe, "list", "--json"], check=True, capture_output=True, text=True).stdout)
    cache, bad, checked = {}, [], 0
    for c in cases:
        b = c["basis"]
        if b["keyword"] == "fixture" or b["source"].startswith("requirements/"):
            continue
        p = document(repo, b["source"])
        if b["source"].startswith("ext-") and not os.path.isfile(p):
            print(f"{c['id']}: {b['source']}: no checkout of {b['source'].split('/', 1)[0]} beside the spec repository, not checked")
            continue
        if b["source"].startswith("seps/") and not os.path.isfile(p):
            # A SEP accepted after the checkout (skills: refs/pull/2640/head).
            print(f"{c['id']}: {b['source']}: not in this checkout of the spec repository, not checked")
            continue
        if p is None or not os.path.isfile(p):
            bad.append(f"{c['id']}: {b['source']} names no document of the spec repository")
            continue
        if p not in cache:
            cache[p] = fold(open(p, encoding="utf-8").read())
        text, at = cache[p], 0
        checked += 1
        for part in (x for x in re.split(r"\s*(?:…|\.\.\.)\s*", fold(b["quote"])) if x):
            found = text.find(part, at)
            if found < 0:
                bad.append(f"{c['id']}: not in {os.path.relpath(p, repo)}: “{part}”")
                break
            at = found + len(part)
        # The section the case links to exists in that revision.
        spec = c["spec"].split(" (", 1)[0]
        sp = document(repo, spec)
        if spec.startswith("ext-") and (sp is None or not os.path.isfile(sp)):
            continue  # the extension's repository is not checked out (said above)
        if sp is None or not os.path.isfile(sp):
            bad.append(f"{c['id']}: its spec link {spec} names no document of that revision")
        elif "#" in spec and spec.split("#", 1)[1] not in anchors(sp):
            bad.append(f"{c['id']}: its spec link {spec}: no such section in {os.path.relpath(sp, repo)}")
    for line in bad:
        print(line)
    print(f"{checked} quotations checked against their documents, {len(bad)} not found")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
