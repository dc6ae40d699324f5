"""Roblox binary model files (.rbxm): write a Folder of ModuleScripts, read one back.

The layout follows the public description of the binary format, version 0
(rojo-rbx/rbx-dom, docs/binary.md, as implemented by its rbx_binary crate):

    header   "<roblox!" 89 ff 0d 0a 1a 0a, u16 version 0, i32 class count,
             i32 instance count, 8 zero bytes
    chunks   INST per class, PROP per class and property, one PRNT, END
    chunk    4-byte name (zero-padded: "END\\0"), u32 compressed length,
             u32 uncompressed length, u32 reserved 0, then the payload:
             uncompressed when the compressed length is 0, else an LZ4 block
             (or a ZSTD frame, which starts 28 b5 2f fd)

Little-endian unless said otherwise. A String is a u32 byte length and the
bytes. An array of referents is delta-encoded (each value minus the previous
one), each delta zigzag-transformed ((x << 1) ^ (x >> 31)) and written as
big-endian bytes interleaved column-wise: every value's first byte, then every
value's second byte, and so on. Referent -1 is "no parent".

A script's `Source` (a ProtectedString in the reflection API) is stored with
the String type id 0x01, as Studio and rbx_binary write it; 0x1d is
`Bytecode`, which Studio ignores.

The writer leaves every chunk uncompressed (compressed length 0), which the
format allows; the reader also takes LZ4-compressed chunks, as Studio writes.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

__all__ = ["RbxInstance", "RbxmError", "folder_rbxm", "read_rbxm"]

MAGIC = b"<roblox!"
SIGNATURE = b"\x89\xff\x0d\x0a\x1a\x0a"
VERSION = 0
END_MAGIC = b"</roblox>"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

TYPE_STRING = 0x01
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


# -- writing -------------------------------------------------------------------------------


def folder_rbxm(name: str, modules: dict[str, str]) -> bytes:
    """A model holding one Folder called `name` whose children are ModuleScripts.

    `modules` maps each ModuleScript's Name to its Source, in child order.
    The Folder is the only root instance.
    """
    if not isinstance(name, str) or not all(isinstance(k, str) and isinstance(v, str) for k, v in modules.items()):
        raise TypeError("folder_rbxm takes a str name and a dict of str module names to str sources")
    module_count = len(modules)
    classes: list[tuple[str, list[int], dict[str, list[str]]]] = [("Folder", [0], {"Name": [name]})]
    if module_count:
        referents = list(range(1, module_count + 1))
        classes.append(("ModuleScript", referents, {"Name": list(modules), "Source": list(modules.values())}))

    out = bytearray()
    out += MAGIC + SIGNATURE + struct.pack("<Hii", VERSION, len(classes), 1 + module_count) + bytes(8)
    for class_id, (class_name, referents, _) in enumerate(classes):
        payload = bytearray(_U32.pack(class_id))
        payload += _string(class_name)
        payload.append(0)  # object format: a regular class, not a service
        payload += _U32.pack(len(referents))
        payload += _referent_array(referents)
        out += _chunk(b"INST", payload)
    for class_id, (_, _, properties) in enumerate(classes):
        for property_name in sorted(properties):
            payload = bytearray(_U32.pack(class_id))
            payload += _string(property_name)
            payload.append(TYPE_STRING)
            for value in properties[property_name]:
                payload += _string(value)
            out += _chunk(b"PROP", payload)
    children = [0, *range(1, module_count + 1)]
    parents = [-1, *([0] * module_count)]
    payload = bytearray([0])  # PRNT version
    payload += _U32.pack(len(children))
    payload += _referent_array(children)
    payload += _referent_array(parents)
    out += _chunk(b"PRNT", payload)
    out += _chunk(b"END\0", END_MAGIC)
    return bytes(out)


def _chunk(name: bytes, payload: bytes | bytearray) -> bytes:
    """An uncompressed chunk: compressed length 0, then the payload as is."""
    return name + struct.pack("<III", 0, len(payload), 0) + bytes(payload)


def _string(value: str) -> bytes:
    data = value.encode("utf-8", "surrogatepass")
    return _U32.pack(len(data)) + data


def _zigzag(value: int) -> int:
    return ((value << 1) ^ (value >> 31)) & 0xFFFFFFFF


def _unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def _interleaved_i32(values: list[int]) -> bytes:
    encoded = [_zigzag(v).to_bytes(4, "big") for v in values]
    return bytes(word[column] for column in range(4) for word in encoded)


def _referent_array(referents: list[int]) -> bytes:
    deltas, previous = [], 0
    for referent in referents:
        deltas.append(referent - previous)
        previous = referent
    return _interleaved_i32(deltas)


# -- reading -------------------------------------------------------------------------------


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
            for referent, value in zip(referents, reader.values(type_id, len(referents)), strict=True):
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
    class_of = {referent: class_name for class_name, referents in classes.values() for referent in referents}
    instances = []
    for referent in order:
        props = {
            key: (index.get(value) if isinstance(value, _Ref) else value) for key, value in properties[referent].items()
        }
        parent = parents.get(referent, -1)
        if parent != -1 and parent not in index:
            raise RbxmError(f"referent {referent} has an unknown parent {parent}")
        name_value = props.get("Name", "")
        instances.append(
            RbxInstance(class_of[referent], name_value if isinstance(name_value, str) else "", props, index.get(parent))
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
    return name, lz4_block_decompress(body, length), start + stored


def lz4_block_decompress(block: bytes, size: int) -> bytes:
    """Decode one raw LZ4 block (no frame) that expands to exactly `size` bytes."""
    out = bytearray()
    i, n = 0, len(block)
    try:
        while i < n:
            token = block[i]
            i += 1
            literals = token >> 4
            if literals == 15:
                while True:
                    extra = block[i]
                    i += 1
                    literals += extra
                    if extra != 255:
                        break
            if i + literals > n:
                raise RbxmError("LZ4 block: literals run past the end")
            out += block[i : i + literals]
            i += literals
            if i == n:
                break  # the last sequence has literals only
            distance = block[i] | block[i + 1] << 8
            i += 2
            length = token & 15
            if length == 15:
                while True:
                    extra = block[i]
                    i += 1
                    length += extra
                    if extra != 255:
                        break
            length += 4
            start = len(out) - distance
            if distance == 0 or start < 0:
                raise RbxmError("LZ4 block: match points before the start")
            if distance >= length:
                out += out[start : start + length]
            else:
                for k in range(length):
                    out.append(out[start + k])
    except IndexError:
        raise RbxmError("LZ4 block is cut short") from None
    if len(out) != size:
        raise RbxmError(f"LZ4 block expands to {len(out)} bytes, the chunk header says {size}")
    return bytes(out)


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
            return [None if referent == -1 else _Ref(referent) for referent in self.referents(count)]
        raw = RawProperty(type_id, self.take(len(self.payload) - self.at))
        return [raw] * count
