#!/usr/bin/python3
"""Independent reader for sluice's Avro interop tests (Debian python3-avro).

Usage: /usr/bin/python3 avro_read.py FILE...
Prints one JSON object per file: {"file", "ids", "records", "metadata"}.
Records are read with logical types stripped from the schema, so values come
back in their raw Avro form: bytes/fixed as hex, NaN/Infinity as strings,
maps as objects, non-string-key maps (arrays of key/value records) as lists.
"ids" maps a dotted field path to the Iceberg id attribute python-avro sees
(field-id, element-id, key-id, value-id, or the field-ids of key/value
records).
"""
import json
import math
import sys
import warnings

import avro.datafile
import avro.io
import avro.schema

warnings.simplefilter("ignore")


def strip_logical(node):
    if isinstance(node, dict):
        return {k: strip_logical(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [strip_logical(v) for v in node]
    return node


def wrap_long(value):
    """An overlong varint (a value beyond 64 bits, which python keeps) read
    the way Java's decoder and sluice read it: only the low 64 bits count."""
    n = (value << 1) if value >= 0 else (-value << 1) - 1
    n &= (1 << 64) - 1
    return (n >> 1) ^ -(n & 1)


def raw(value):
    if isinstance(value, int) and not isinstance(value, bool):
        if not -(1 << 63) <= value < (1 << 63):
            return wrap_long(value)
        return value
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, dict):
        return {k: raw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [raw(v) for v in value]
    return value


def walk(node, path, ids):
    """Collects Iceberg id attributes from the schema JSON python-avro parsed."""
    if isinstance(node, list):
        for branch in node:
            walk(branch, path, ids)
        return
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "record":
        for field in node["fields"]:
            sub = path + [field["name"]]
            ids[".".join(sub)] = field.get("field-id")
            walk(field["type"], sub, ids)
    elif kind == "array":
        items = node["items"]
        if node.get("logicalType") == "map" and isinstance(items, dict):
            for field in items["fields"]:
                sub = path + [field["name"]]
                ids[".".join(sub)] = field.get("field-id")
                walk(field["type"], sub, ids)
        else:
            ids[".".join(path + ["element"])] = node.get("element-id")
            walk(items, path + ["element"], ids)
    elif kind == "map":
        ids[".".join(path + ["key"])] = node.get("key-id")
        ids[".".join(path + ["value"])] = node.get("value-id")
        walk(node["values"], path + ["value"], ids)
    elif isinstance(kind, (dict, list)):
        walk(kind, path, ids)


def read(path):
    with open(path, "rb") as fh:
        probe = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
        writer_json = probe.datum_reader.writers_schema.to_json()
        metadata = {k: v.decode("utf-8", "replace") for k, v in probe.meta.items()
                    if k != "avro.schema"}
    stripped = avro.schema.parse(json.dumps(strip_logical(writer_json)))
    records = []
    with open(path, "rb") as fh:
        reader = avro.datafile.DataFileReader(fh, avro.io.DatumReader())
        # python-avro applies the writer schema's logical types; the stripped
        # schema has the same binary layout, so decode with it instead.
        reader.datum_reader.writers_schema = stripped
        reader.datum_reader.readers_schema = stripped
        for record in reader:
            records.append(raw(record))
    ids = {}
    walk(writer_json, [], ids)
    return {"file": path, "ids": ids, "records": records, "metadata": metadata}


def main():
    for path in sys.argv[1:]:
        print(json.dumps(read(path), sort_keys=True))


if __name__ == "__main__":
    main()
