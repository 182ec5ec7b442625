"""The servers of a board's board.json, read from its pages (format 2:
`pages` lists `board/servers-NNNN.json`, each {"servers": [...]})."""
import json
import os


def servers(board_json):
    b = json.load(open(board_json))
    if "servers" in b:  # format 1: every server inline
        return b["servers"]
    base = os.path.dirname(board_json)
    out = []
    for p in b.get("pages", []):
        out.extend(json.load(open(os.path.join(base, p)))["servers"])
    return out
