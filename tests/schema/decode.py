#!/usr/bin/env python3
"""An independent decoder for tests/schema.rs: kafkabench's schema-shaped records read back
with other people's code (fastavro, protobuf classes compiled by grpc_tools.protoc, json and
jsonschema), every constraint of the schema checked and every byte of each record consumed.

  decode.py avro|protobuf|json SCHEMA RECORDS [--message M] [--lines JSONL] [--prefix]

RECORDS holds the records back to back, each a 4-byte big-endian length then its bytes.
With --lines, record i must equal line i of JSONL (as a JSON value, in the schema's JSON
convention); with --prefix each record starts with the Confluent wire prefix. Prints a JSON
summary; exits 1 naming the first record that does not decode or does not fit.
"""
import argparse
import datetime
import decimal
import importlib
import io
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import uuid

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# Generated instants are near now; a file's lines may be of any time.
RECENT = True


class Misfit(Exception):
    pass


def records(path):
    data = open(path, "rb").read()
    at = 0
    while at < len(data):
        if at + 4 > len(data):
            raise Misfit(f"a length prefix cut short at byte {at}")
        (n,) = struct.unpack(">I", data[at:at + 4])
        yield data[at + 4:at + 4 + n]
        at += 4 + n


def read_varint(b, at):
    shift = value = 0
    while True:
        if at >= len(b):
            raise Misfit("a varint cut short")
        c = b[at]
        at += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return value, at


def strip_prefix(b, fmt):
    if len(b) < 5 or b[0] != 0:
        raise Misfit("no Confluent wire prefix (magic byte 0)")
    (sid,) = struct.unpack(">I", b[1:5])
    at = 5
    if fmt == "protobuf":
        n, at = read_varint(b, at)
        n = (n >> 1) ^ -(n & 1)
        for _ in range(n):
            _, at = read_varint(b, at)
    return sid, b[at:]


# ---- Avro -----------------------------------------------------------------------------------

def avro_setup(schema_path):
    import fastavro
    parsed = fastavro.parse_schema(json.load(open(schema_path)))
    # fastavro's parsed form names every type by its full name, references too.
    raw = json.loads(json.dumps(parsed, default=str))
    return parsed, raw


def avro_names(schema, names):
    """Every named type of the schema by its full name, wherever it is defined (a union
    branch a record does not take still defines its type for later references)."""
    if isinstance(schema, list):
        for b in schema:
            avro_names(b, names)
    elif isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed") and "name" in schema:
            names.setdefault(schema["name"], schema)
        for f in schema.get("fields", []):
            avro_names(f["type"], names)
        for k in ("items", "values", "type"):
            if isinstance(schema.get(k), (dict, list)):
                avro_names(schema[k], names)
    return names


def avro_decode(parsed, b):
    import fastavro
    bio = io.BytesIO(b)
    v = fastavro.schemaless_reader(bio, parsed, None)
    if bio.tell() != len(b):
        raise Misfit(f"{len(b) - bio.tell()} bytes left over after the record")
    return v


def avro_plain(schema, v, names):
    """A decoded value in kafkabench's plain-JSON convention for Avro (what --lines holds)."""
    if isinstance(schema, str):
        if schema in names:
            return avro_plain(names[schema], v, names)
        if schema == "bytes":
            return v.decode("latin-1")
        return v
    if isinstance(schema, list):
        for branch in schema:
            if avro_fits(branch, v, names):
                return avro_plain(branch, v, names)
        raise Misfit(f"{v!r} fits no branch of {schema}")
    t, lt = schema.get("type"), schema.get("logicalType")
    if "name" in schema and t in ("record", "enum", "fixed"):
        names.setdefault(schema["name"], schema)
        ns = schema.get("namespace")
        if ns:
            names.setdefault(f"{ns}.{schema['name']}", schema)
    if lt == "timestamp-millis":
        return (v - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(milliseconds=1)
    if lt == "timestamp-micros":
        return (v - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(microseconds=1)
    if lt == "date":
        return (v - datetime.date(1970, 1, 1)).days
    if lt == "uuid":
        return str(v)
    if lt == "decimal":
        return format(v, "f")
    if t == "record":
        return {f["name"]: avro_plain(f["type"], v[f["name"]], names) for f in schema["fields"]}
    if t == "array":
        return [avro_plain(schema["items"], x, names) for x in v]
    if t == "map":
        return {k: avro_plain(schema["values"], x, names) for k, x in v.items()}
    if t == "fixed":
        return v.decode("latin-1")
    if t == "enum":
        return v
    return avro_plain(t, v, names)


def avro_fits(schema, v, names):
    if isinstance(schema, str):
        if schema in names:
            return avro_fits(names[schema], v, names)
        return {"null": v is None, "string": isinstance(v, str), "boolean": isinstance(v, bool),
                "int": isinstance(v, int), "long": isinstance(v, int), "bytes": isinstance(v, bytes),
                "float": isinstance(v, float), "double": isinstance(v, float)}.get(schema, False)
    t, lt = schema.get("type"), schema.get("logicalType")
    if lt and lt.startswith(("timestamp-", "local-timestamp-")):
        return isinstance(v, datetime.datetime)
    if lt in ("time-millis", "time-micros"):
        return isinstance(v, datetime.time)
    if lt == "date":
        return isinstance(v, datetime.date)
    if lt == "uuid":
        return isinstance(v, (uuid.UUID, str))
    if lt == "decimal":
        return isinstance(v, decimal.Decimal)
    if t == "record":
        return isinstance(v, dict) and set(v) == {f["name"] for f in schema["fields"]}
    return {"map": isinstance(v, dict), "array": isinstance(v, list),
            "enum": isinstance(v, str), "fixed": isinstance(v, bytes)}.get(t) or avro_fits(t, v, names)


def avro_check(schema, v, names, where="record", recent=True):
    """What fastavro does not check on read: instants near now, uuids, decimal digits."""
    if isinstance(schema, str):
        if schema in names:
            avro_check(names[schema], v, names, where, recent)
        return
    if isinstance(schema, list):
        for b in schema:
            if avro_fits(b, v, names):
                return avro_check(b, v, names, where, recent)
        raise Misfit(f"{where}: {v!r} fits no branch")
    t, lt = schema.get("type"), schema.get("logicalType")
    if "name" in schema and t in ("record", "enum", "fixed"):
        names.setdefault(schema["name"], schema)
    if lt in ("timestamp-millis", "timestamp-micros") and recent:
        now = datetime.datetime.now(datetime.timezone.utc)
        if not (now - datetime.timedelta(days=2) <= v <= now + datetime.timedelta(minutes=5)):
            raise Misfit(f"{where}: instant {v} is not near now")
    elif lt == "uuid":
        if not UUID.match(str(v)):
            raise Misfit(f"{where}: {v!r} is not a uuid")
    elif lt == "decimal":
        digits = len(v.as_tuple().digits)
        if digits > schema["precision"] or -v.as_tuple().exponent != schema.get("scale", 0):
            raise Misfit(f"{where}: decimal {v} does not fit precision {schema['precision']}")
    elif t == "record":
        for f in schema["fields"]:
            avro_check(f["type"], v[f["name"]], names, f"{where}.{f['name']}", recent)
    elif t == "array":
        for i, x in enumerate(v):
            avro_check(schema["items"], x, names, f"{where}[{i}]", recent)
    elif t == "map":
        for k, x in v.items():
            avro_check(schema["values"], x, names, f"{where}[{k!r}]", recent)
    elif t == "enum":
        if v not in schema["symbols"]:
            raise Misfit(f"{where}: {v!r} is not a symbol of {schema['name']}")
    elif t == "fixed":
        if len(v) != schema["size"]:
            raise Misfit(f"{where}: fixed of {len(v)} bytes, not {schema['size']}")
    elif isinstance(t, (dict, list)):
        avro_check(t, v, names, where, recent)


# ---- Protobuf -------------------------------------------------------------------------------

def proto_setup(schema_path, message):
    from grpc_tools import protoc
    import grpc_tools
    from google.protobuf import message_factory
    out = tempfile.mkdtemp(prefix="kb-proto-")
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    d, f = os.path.split(os.path.abspath(schema_path))
    # The file and every file it imports from beside it (or below): compiled together.
    imports = set()
    todo = [f]
    while todo:
        name = todo.pop()
        if name in imports:
            continue
        imports.add(name)
        text = open(os.path.join(d, name), encoding="utf-8").read()
        for i in re.findall(r'^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"', text, re.M):
            if os.path.exists(os.path.join(d, i)):
                todo.append(i)
    rc = protoc.main(["protoc", f"-I{d}", f"-I{include}", f"--python_out={out}", *sorted(imports)])
    if rc != 0:
        raise Misfit(f"protoc could not compile {schema_path}")
    sys.path.insert(0, out)
    module = importlib.import_module(f[:-len(".proto")].replace("-", "_") + "_pb2")
    desc = module.DESCRIPTOR.pool.FindMessageTypeByName(message)
    return message_factory.GetMessageClass(desc)


def proto_decode(cls, b):
    from google.protobuf.unknown_fields import UnknownFieldSet
    m = cls()
    m.ParseFromString(b)
    proto_check(m, "record")
    return m


def proto_check(m, where):
    from google.protobuf.unknown_fields import UnknownFieldSet
    from google.protobuf.descriptor import FieldDescriptor as F
    unknown = UnknownFieldSet(m)
    if len(unknown):
        raise Misfit(f"{where}: {len(unknown)} fields the schema does not declare (field {unknown[0].field_number})")
    for fd, v in m.ListFields():
        name = f"{where}.{fd.name}"
        repeated = fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == F.LABEL_REPEATED
        values = v if repeated else [v]
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            vf = fd.message_type.fields_by_name["value"]
            values = list(v.values())
            if vf.message_type is None:
                continue
        for i, x in enumerate(values):
            if fd.type == F.TYPE_ENUM and x not in fd.enum_type.values_by_number:
                raise Misfit(f"{name}: {x} is not a value of {fd.enum_type.name}")
            if fd.type == F.TYPE_MESSAGE:
                if fd.message_type.full_name == "google.protobuf.Timestamp" and RECENT:
                    now = datetime.datetime.now(datetime.timezone.utc).timestamp()
                    if not (now - 2 * 86400 <= x.seconds <= now + 300) or not 0 <= x.nanos < 10**9:
                        raise Misfit(f"{name}: timestamp {x.seconds}s is not near now")
                proto_check(x, f"{name}[{i}]" if repeated else name)
    for o in m.DESCRIPTOR.oneofs:
        if len([f for f in o.fields if m.HasField(f.name)]) > 1:
            raise Misfit(f"{where}: more than one member of oneof {o.name} set")


# ---- JSON Schema ----------------------------------------------------------------------------

def json_setup(schema_path):
    import jsonschema
    schema = json.load(open(schema_path))
    checker = jsonschema.FormatChecker()

    @checker.checks("uuid")
    def is_uuid(s):
        return not isinstance(s, str) or bool(UUID.match(s))

    @checker.checks("date-time")
    def is_date_time(s):
        if not isinstance(s, str):
            return True
        datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
        return bool(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$", s))

    @checker.checks("date")
    def is_date(s):
        return not isinstance(s, str) or bool(datetime.date.fromisoformat(s))

    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=checker)


def json_decode(validator, b):
    text = b.decode("utf-8")
    v = json.loads(text)
    errors = sorted(validator.iter_errors(v), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        raise Misfit(f"{'/'.join(map(str, e.path)) or 'the record'}: {e.message}")
    return v


# ---- main -----------------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser()
    p.add_argument("format", choices=["avro", "protobuf", "json"])
    p.add_argument("schema")
    p.add_argument("records")
    p.add_argument("--message")
    p.add_argument("--lines")
    p.add_argument("--prefix", action="store_true")
    a = p.parse_args()
    if a.format == "avro":
        parsed, raw = avro_setup(a.schema)
        decode = lambda b: avro_decode(parsed, b)
    elif a.format == "protobuf":
        cls = proto_setup(a.schema, a.message)
        decode = lambda b: proto_decode(cls, b)
    else:
        validator = json_setup(a.schema)
        decode = lambda b: json_decode(validator, b)
    global RECENT
    lines = None
    RECENT = not a.lines
    if a.lines:
        lines = [l for l in open(a.lines, encoding="utf-8").read().split("\n") if l.strip()]
    summary = {"records": 0, "bytes": 0, "schema_ids": [], "enum_values": {}}
    for i, b in enumerate(records(a.records)):
        try:
            summary["bytes"] += len(b)
            if a.prefix:
                sid, b = strip_prefix(b, a.format)
                if sid not in summary["schema_ids"]:
                    summary["schema_ids"].append(sid)
            v = decode(b)
            if a.format == "avro":
                avro_check(raw, v, avro_names(raw, {}), "record", recent=lines is None)
            if lines is not None:
                if i >= len(lines):
                    raise Misfit("more records than lines")
                if a.format == "avro":
                    got, want = avro_plain(raw, v, avro_names(raw, {})), json.loads(lines[i])
                elif a.format == "protobuf":
                    from google.protobuf import json_format
                    want_msg = json_format.Parse(lines[i], cls())
                    if want_msg != v:
                        raise Misfit(f"decoded {json_format.MessageToJson(v)} differs from the line")
                    got = want = None
                else:
                    got, want = v, json.loads(lines[i])
                if got != want:
                    raise Misfit(f"decoded {got} differs from the line {want}")
            if a.format == "avro" and isinstance(v, dict) and "status" in v:
                summary["enum_values"].setdefault("status", [])
                if v["status"] not in summary["enum_values"]["status"]:
                    summary["enum_values"]["status"].append(v["status"])
        except Exception as e:  # every failure names its record
            print(f"record {i}: {type(e).__name__}: {e}", file=sys.stderr)
            sys.exit(1)
        summary["records"] += 1
    if lines is not None and summary["records"] != len(lines):
        print(f"{summary['records']} records for {len(lines)} lines", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
