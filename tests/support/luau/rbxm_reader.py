"""A reader of Roblox binary model files (.rbxm), for the tests: they read back what
evals/luau/rbxm.py writes (the layout is described there) and what the fake JestLuaTestServer
receives. It decodes LZ4-compressed chunks too, as Studio writes them, through the `lz4`
package (a test dependency); ZSTD chunks are refused."""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import lz4.block

from evals.luau.rbxm import END_MAGIC, MAGIC, SIGNATURE, TYPE_STRING, VERSION

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
TYPE_BOOL = 0x02
TYPE_INT32 = 0x03
TYPE_FLOAT64 = 0x05
TYPE_REFERENT = 0x13

_U32 = struct.Struct("<I")


class RbxmError(ValueError):
    """Bytes that are not a binary model file this reader understands."""


class RbxInstance(NamedTuple):
    """One instance of a model read by `read_rbxm`.

    parent is the index of the parent in the returned list, or None for a root.
    properties maps each property name to its value: str for String
    properties (bytes when they are not UTF-8), bool, int, float, a list index
    (or None) for referents; values of other types are a `RawProperty`.
    """

    class_name: str
    name: str
    properties: dict[str, Any]
    parent: int | None


class RawProperty(NamedTuple):
    """A property of a type this reader does not decode: its type id and the whole PROP payload."""

    type_id: int
    data: bytes


def read_rbxm(data: bytes) -> list[RbxInstance]:
    """Every instance of a binary model, in referent order, with its class, Name, properties and parent."""
    data = bytes(data)
    if len(data) < 32 or data[:8] != MAGIC:
        raise RbxmError("not a binary Roblox model: it does not start with '<roblox!'")
    if data[8:14] != SIGNATURE:
        raise RbxmError(f"bad file signature {data[8:14].hex(' ')}")
    version, class_count, instance_count = struct.unpack_from("<Hii", data, 14)
    if version != VERSION:
        raise RbxmError(f"unsupported format version {version}")
    if data[24:32] != bytes(8):
        raise RbxmError("reserved header bytes are not zero")

    classes: dict[int, tuple[str, list[int]]] = {}
    properties: dict[int, dict[str, Any]] = {}
    parents: dict[int, int] | None = None
    offset, ended = 32, False
    while not ended:
        name, payload, offset = _read_chunk(data, offset)
        reader = _Reader(payload, name)
        if name == b"META" or name == b"SSTR":
            continue  # metadata and shared strings: nothing a Folder of scripts needs
        if name == b"INST":
            class_id = reader.u32()
            class_name = reader.text()
            object_format = reader.u8()
            referents = reader.referents(reader.u32())
            if object_format == 1:
                reader.take(len(referents))  # one service marker per instance
            elif object_format != 0:
                raise RbxmError(f"INST {class_name}: unknown object format {object_format}")
            if class_id in classes:
                raise RbxmError(f"class id {class_id} is declared twice")
            classes[class_id] = (class_name, referents)
            for referent in referents:
                if referent in properties:
                    raise RbxmError(f"referent {referent} is declared twice")
                properties[referent] = {}
        elif name == b"PROP":
            class_id = reader.u32()
            if class_id not in classes:
                raise RbxmError(f"PROP for undeclared class id {class_id}")
            property_name = reader.text()
            type_id = reader.u8()
            referents = classes[class_id][1]
            for referent, value in zip(
                referents, reader.values(type_id, len(referents)), strict=True
            ):
                properties[referent][property_name] = value
        elif name == b"PRNT":
            if parents is not None:
                raise RbxmError("more than one PRNT chunk")
            if reader.u8() != 0:
                raise RbxmError("unknown PRNT version")
            count = reader.u32()
            parents = dict(zip(reader.referents(count), reader.referents(count), strict=True))
        elif name == b"END\0":
            if payload != END_MAGIC:
                raise RbxmError("END chunk does not hold '</roblox>'")
            ended = True
            reader.take(len(payload))
        else:
            raise RbxmError(f"unknown chunk {name!r}")
        reader.finish()
    if offset != len(data):
        raise RbxmError(f"{len(data) - offset} bytes after the END chunk")
    if len(classes) != class_count or len(properties) != instance_count:
        raise RbxmError(
            f"header declares {class_count} classes and {instance_count} instances, "
            f"the chunks hold {len(classes)} and {len(properties)}"
        )
    if parents is None:
        raise RbxmError("no PRNT chunk")

    order = sorted(properties)
    index = {referent: i for i, referent in enumerate(order)}
    class_of = {
        referent: class_name for class_name, referents in classes.values() for referent in referents
    }
    instances = []
    for referent in order:
        props = {
            key: (index.get(value) if isinstance(value, _Ref) else value)
            for key, value in properties[referent].items()
        }
        parent = parents.get(referent, -1)
        if parent != -1 and parent not in index:
            raise RbxmError(f"referent {referent} has an unknown parent {parent}")
        name_value = props.get("Name", "")
        instances.append(
            RbxInstance(
                class_of[referent],
                name_value if isinstance(name_value, str) else "",
                props,
                index.get(parent),
            )
        )
    return instances


class _Ref(int):
    """A referent read from a PROP chunk, turned into a list index at the end."""


def _read_chunk(data: bytes, offset: int) -> tuple[bytes, bytes, int]:
    if offset + 16 > len(data):
        raise RbxmError("the file ends before its END chunk")
    name = data[offset : offset + 4]
    compressed, length, reserved = struct.unpack_from("<III", data, offset + 4)
    if reserved != 0:
        raise RbxmError(f"chunk {name!r}: reserved field is {reserved}, not 0")
    start = offset + 16
    stored = compressed or length
    if start + stored > len(data):
        raise RbxmError(f"chunk {name!r} is cut short")
    body = data[start : start + stored]
    if compressed == 0:
        return name, body, start + stored
    if body[:4] == ZSTD_MAGIC:
        raise RbxmError(f"chunk {name!r} is ZSTD-compressed, which this reader does not decode")
    return name, _lz4_block(body, length, name), start + stored


def _lz4_block(block: bytes, size: int, name: bytes) -> bytes:
    """One raw LZ4 block (no frame) that must expand to exactly `size` bytes."""
    try:
        out = lz4.block.decompress(block, uncompressed_size=size)
    except lz4.block.LZ4BlockError as error:
        raise RbxmError(f"chunk {name!r}: LZ4 block does not decode ({error})") from None
    if len(out) != size:
        raise RbxmError(
            f"chunk {name!r}: LZ4 block expands to {len(out)} bytes, the chunk header says {size}"
        )
    return out


def _unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


class _Reader:
    def __init__(self, payload: bytes, chunk: bytes):
        self.payload = payload
        self.chunk = chunk.rstrip(b"\0").decode("ascii", "replace")
        self.at = 0

    def take(self, count: int) -> bytes:
        if count < 0 or self.at + count > len(self.payload):
            raise RbxmError(f"{self.chunk} chunk is shorter than its contents say")
        piece = self.payload[self.at : self.at + count]
        self.at += count
        return piece

    def finish(self) -> None:
        if self.at != len(self.payload):
            raise RbxmError(f"{self.chunk} chunk has {len(self.payload) - self.at} unread bytes")

    def u8(self) -> int:
        return self.take(1)[0]

    def u32(self) -> int:
        return _U32.unpack(self.take(4))[0]

    def raw_string(self) -> bytes:
        return self.take(self.u32())

    def text(self) -> str:
        try:
            return self.raw_string().decode("utf-8", "surrogatepass")
        except UnicodeDecodeError as error:
            raise RbxmError(f"{self.chunk} chunk: a name is not UTF-8") from error

    def interleaved_i32(self, count: int) -> list[int]:
        raw = self.take(4 * count)
        return [
            _unzigzag(int.from_bytes(bytes(raw[column * count + i] for column in range(4)), "big"))
            for i in range(count)
        ]

    def referents(self, count: int) -> list[int]:
        values, total = [], 0
        for delta in self.interleaved_i32(count):
            total += delta
            values.append(total)
        return values

    def values(self, type_id: int, count: int) -> list[Any]:
        if type_id == TYPE_STRING:
            result: list[Any] = []
            for _ in range(count):
                raw = self.raw_string()
                try:
                    result.append(raw.decode("utf-8", "surrogatepass"))
                except UnicodeDecodeError:
                    result.append(raw)  # a binary string, such as AttributesSerialize
            return result
        if type_id == TYPE_BOOL:
            return [byte != 0 for byte in self.take(count)]
        if type_id == TYPE_INT32:
            return self.interleaved_i32(count)
        if type_id == TYPE_FLOAT64:
            return list(struct.unpack(f"<{count}d", self.take(8 * count)))
        if type_id == TYPE_REFERENT:
            return [
                None if referent == -1 else _Ref(referent) for referent in self.referents(count)
            ]
        raw = RawProperty(type_id, self.take(len(self.payload) - self.at))
        return [raw] * count
