#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# A strict reader of grove's --json documents (docs/json.md, "Names that are not UTF-8"), for the
# round trip of t0125: the document must be UTF-8 (decoded strictly), one JSON document, valid
# against docs/grove.schema.json, and every KEY_hex beside a KEY must agree with it: KEY is the
# shown form of bytes that are not UTF-8 (each stray byte \xHH, each backslash doubled), KEY_hex
# those bytes. The decoding below is written from the rule in docs/json.md, not from grove's code.
#
#   names.py SCHEMA DOC COMMAND EXPR   exit 0 when DOC is such a document of COMMAND and the Python
#                                      expression EXPR is true; EXPR sees d (the document), B(obj,
#                                      key) (the bytes of a name field), BL(obj, key) (of a list of
#                                      names), want (the names in $NAMES_FILE, hex lines, as a set
#                                      of bytes), unhex (bytes.fromhex) and P(VAR) (the bytes of
#                                      the environment variable VAR)
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate  # noqa: E402


class Bad(Exception):
    pass


def utf8_ok(b):
    try:
        b.decode("utf-8", "strict")
        return True
    except UnicodeDecodeError:
        return False


def unshow(s):
    """The bytes of a shown form: \\\\ is a backslash, \\xHH the byte HH, the rest UTF-8."""
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == "\\":
            if s[i + 1:i + 2] == "\\":
                out += b"\\"
                i += 2
                continue
            m = re.match(r"x([0-9a-f]{2})", s[i + 1:i + 4])
            if not m:
                raise Bad("a lone backslash in the shown form %r" % s)
            out.append(int(m.group(1), 16))
            i += 4
            continue
        out += s[i].encode("utf-8")
        i += 1
    return bytes(out)


def name_bytes(value, hexed):
    """The bytes of one name field, checking the field and its hex agree."""
    if hexed is None:
        if value is None:
            return None
        return value.encode("utf-8")
    if not isinstance(value, str):
        raise Bad("a _hex beside %r, which is not a string" % (value,))
    raw = bytes.fromhex(hexed)
    if utf8_ok(raw):
        raise Bad("%r has a _hex, but its bytes %r are UTF-8" % (value, raw))
    if unshow(value) != raw:
        raise Bad("the shown form %r is not the bytes %r of its _hex" % (value, raw))
    return raw


def check_hex(node, where="$"):
    """Every KEY_hex has its KEY, and they agree, everywhere in the document."""
    if isinstance(node, list):
        for i, v in enumerate(node):
            check_hex(v, "%s[%d]" % (where, i))
        return
    if not isinstance(node, dict):
        return
    for k, v in node.items():
        if k.endswith("_hex"):
            base = k[:-4]
            if base not in node:
                raise Bad("%s.%s without %s" % (where, k, base))
            if isinstance(v, list):
                if not isinstance(node[base], list) or len(v) != len(node[base]):
                    raise Bad("%s.%s is not a list as long as %s" % (where, k, base))
                if all(h is None for h in v):
                    raise Bad("%s.%s holds no name" % (where, k))
                for name, h in zip(node[base], v):
                    if h is None and not isinstance(name, str):
                        raise Bad("%s.%s: %r" % (where, base, name))
                    name_bytes(name, h)
            else:
                name_bytes(node[base], v)
        else:
            check_hex(v, "%s.%s" % (where, k))


def B(obj, key):
    return name_bytes(obj[key], obj.get(key + "_hex"))


def BL(obj, key):
    hexes = obj.get(key + "_hex") or [None] * len(obj[key])
    return [name_bytes(v, h) for v, h in zip(obj[key], hexes)]


def main(argv):
    schema_path, doc_path, command, expr = argv[1:5]
    raw = open(doc_path, "rb").read()
    try:
        text = raw.decode("utf-8", "strict")
        d = json.loads(text)
        if not raw.endswith(b"\n") or raw.count(b"\n") != 1:
            raise Bad("not one line")
        validate.validate(json.load(open(schema_path)), d)
        if command != "-" and d.get("command") != command:
            raise Bad("command %r, not %r" % (d.get("command"), command))
        check_hex(d)
    except (UnicodeDecodeError, ValueError, Bad, validate.Invalid) as e:
        print("%s: %s" % (doc_path, e), file=sys.stderr)
        return 1
    want = set()
    if os.environ.get("NAMES_FILE"):
        want = {bytes.fromhex(line) for line in open(os.environ["NAMES_FILE"]) if line.strip()}
    env = {"d": d, "B": B, "BL": BL, "want": want, "unhex": bytes.fromhex,
           "P": lambda var: os.environb[var.encode()]}
    try:
        ok = eval("(%s\n)" % expr, env)  # (an expression may span lines)
    except (Bad, KeyError, TypeError, IndexError) as e:
        print("%s: %s: %r" % (doc_path, expr, e), file=sys.stderr)
        return 1
    if not ok:
        print("%s: not true: %s\nof: %.2000s" % (doc_path, expr, text), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
