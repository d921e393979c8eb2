#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
# A small JSON Schema validator (the subset docs/grove.schema.json uses: type, const, enum,
# required, properties, patternProperties, additionalProperties: false, items, minimum, pattern,
# oneOf, local $ref),
# written here so the test needs nothing beyond python3.
#
#   validate.py SCHEMA DOC.json [COMMAND]   exit 0 when DOC validates (and its "command" is COMMAND)
#   validate.py --self-test SCHEMA          exit 0 when known-bad documents are rejected
import json
import re
import sys

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
KNOWN = {"$schema", "title", "description", "$defs", "type", "const", "enum", "required",
         "properties", "patternProperties", "additionalProperties", "items", "minimum", "pattern", "oneOf", "$ref"}


class Invalid(Exception):
    pass


def resolve(root, ref):
    if not ref.startswith("#/"):
        raise Invalid("only local $ref is supported: %s" % ref)
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def check(root, schema, v, where):
    unknown = set(schema) - KNOWN
    if unknown:
        raise Invalid("schema uses unsupported keywords %s" % sorted(unknown))
    if "$ref" in schema:
        check(root, resolve(root, schema["$ref"]), v, where)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[t](v) for t in types):
            raise Invalid("%s: %r is not of type %s" % (where, v, "/".join(types)))
    if "const" in schema and (v != schema["const"] or type(v) != type(schema["const"])):
        raise Invalid("%s: %r is not %r" % (where, v, schema["const"]))
    if "enum" in schema and v not in schema["enum"]:
        raise Invalid("%s: %r is not one of %r" % (where, v, schema["enum"]))
    if "minimum" in schema and TYPES["number"](v) and v < schema["minimum"]:
        raise Invalid("%s: %r is below %r" % (where, v, schema["minimum"]))
    if "pattern" in schema and isinstance(v, str) and not re.search(schema["pattern"], v):
        raise Invalid("%s: %r does not match %s" % (where, v, schema["pattern"]))
    if isinstance(v, dict):
        for k in schema.get("required", []):
            if k not in v:
                raise Invalid("%s: missing field %r" % (where, k))
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        for k, sub in v.items():
            matched = [p for p in patterns if re.search(p, k)]
            if k in props:
                check(root, props[k], sub, "%s.%s" % (where, k))
            for p in matched:
                check(root, patterns[p], sub, "%s.%s" % (where, k))
            if k not in props and not matched and schema.get("additionalProperties", True) is False:
                raise Invalid("%s: unexpected field %r" % (where, k))
    if isinstance(v, list) and "items" in schema:
        for i, item in enumerate(v):
            check(root, schema["items"], item, "%s[%d]" % (where, i))
    if "oneOf" in schema:
        errors, ok = [], 0
        for alt in schema["oneOf"]:
            try:
                check(root, alt, v, where)
                ok += 1
            except Invalid as e:
                errors.append(str(e))
        if ok != 1:
            raise Invalid("%s: matches %d of the oneOf schemas, not 1: %s" % (where, ok, "; ".join(errors)))


def validate(schema, doc):
    check(schema, schema, doc, "$")


def self_test(schema):
    good = {"grove": 2, "command": "status", "target": "/t", "log": "/s/grove.db",
            "system_log": False, "unfinished": 0, "unfinished_state": None,
            "unfinished_command": None, "holder": None,
            "packages": [{"package": "a", "links": 2}]}
    validate(schema, good)
    validate(schema, dict(good, target="/t\\xe9", target_hex="2f74e9"))  # a name not UTF-8
    bad = [
        dict(good, target_hex="2f74E9"),                       # not lowercase hex
        dict(good, target_hex=["2f74e9", 1]),                  # not hex, nor null
        dict(good, grove=1),                                   # another schema version
        {k: v for k, v in good.items() if k != "target"},      # a missing field
        dict(good, extra=1),                                   # an unknown field
        dict(good, unfinished="0"),                            # a wrong type
        dict(good, unfinished=True),                           # a bool is not an integer
        dict(good, packages=[{"package": "a"}]),               # a missing field in an item
        dict(good, command="frob"),                            # no such command
        dict(good, unfinished_state="gone"),                   # not one of the states
        dict(good, holder={"pid": 1}),                         # a missing field in an object
        {"grove": 2, "command": "log", "target": "/t", "log": "/s/grove.db", "system_log": False,
         "transactions": [{"id": 1, "time": "2026-12-03 09:00:00", "state": "committed", "ops": 1,
                           "command": "grove", "undoes": 0, "note": None}]},  # not RFC 3339
    ]
    for i, doc in enumerate(bad):
        try:
            validate(schema, doc)
        except Invalid:
            continue
        print("self-test: bad document %d was accepted: %r" % (i, doc), file=sys.stderr)
        return 1
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        return self_test(json.load(open(argv[2])))
    if len(argv) not in (3, 4):
        print(__doc__ if __doc__ else "usage: validate.py SCHEMA DOC [COMMAND]", file=sys.stderr)
        return 2
    schema = json.load(open(argv[1]))
    text = open(argv[2]).read()
    try:
        doc = json.loads(text)
    except ValueError as e:
        print("not JSON (%s): %s" % (e, text[:500]), file=sys.stderr)
        return 1
    try:
        validate(schema, doc)
    except Invalid as e:
        print("invalid: %s" % e, file=sys.stderr)
        return 1
    if len(argv) == 4 and doc.get("command") != argv[3]:
        print("command is %r, expected %r" % (doc.get("command"), argv[3]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
