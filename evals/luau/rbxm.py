"""Roblox binary model files (.rbxm): write a Folder of ModuleScripts.

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
format allows. The tests read the models back with tests/support/luau/rbxm_reader.py.
"""

from __future__ import annotations

import struct

__all__ = ["folder_rbxm"]

MAGIC = b"<roblox!"
SIGNATURE = b"\x89\xff\x0d\x0a\x1a\x0a"
VERSION = 0
END_MAGIC = b"</roblox>"

TYPE_STRING = 0x01

_U32 = struct.Struct("<I")


def folder_rbxm(name: str, modules: dict[str, str]) -> bytes:
    """A model holding one Folder called `name` whose children are ModuleScripts.

    `modules` maps each ModuleScript's Name to its Source, in child order.
    The Folder is the only root instance.
    """
    if not isinstance(name, str) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in modules.items()
    ):
        raise TypeError(
            "folder_rbxm takes a str name and a dict of str module names to str sources"
        )
    module_count = len(modules)
    classes: list[tuple[str, list[int], dict[str, list[str]]]] = [("Folder", [0], {"Name": [name]})]
    if module_count:
        referents = list(range(1, module_count + 1))
        classes.append(
            ("ModuleScript", referents, {"Name": list(modules), "Source": list(modules.values())})
        )

    out = bytearray()
    out += (
        MAGIC + SIGNATURE + struct.pack("<Hii", VERSION, len(classes), 1 + module_count) + bytes(8)
    )
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


def _interleaved_i32(values: list[int]) -> bytes:
    encoded = [_zigzag(v).to_bytes(4, "big") for v in values]
    return bytes(word[column] for column in range(4) for word in encoded)


def _referent_array(referents: list[int]) -> bytes:
    deltas, previous = [], 0
    for referent in referents:
        deltas.append(referent - previous)
        previous = referent
    return _interleaved_i32(deltas)
