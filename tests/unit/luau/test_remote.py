"""The --jest-url backend without a server: the .rbxm model file laid out as the binary format
spec says and read back (tests/support/luau/rbxm_reader.py), and an unreachable server or an
unusable URL as one line. The upload and the replies against a loopback JestLuaTestServer are
tests/e2e/luau/test_remote.py."""

import socket
import struct
import time

import lz4.block
import pytest

from evals.errors import EvalError
from evals.luau.rbxm import folder_rbxm
from evals.luau.remote import JestServerError, run_remote
from tests.support.luau.rbxm_reader import RbxmError, read_rbxm
from tests.support.luau.specs import DOUBLER, DOUBLER_SPEC

KEY = "fake-jest-server-key"


def chunk(name: bytes, payload: bytes) -> bytes:
    """An uncompressed chunk, written out by hand from the spec's chunk header table."""
    return name + struct.pack("<III", 0, len(payload), 0) + payload


def string(text: str) -> bytes:
    return struct.pack("<I", len(text.encode())) + text.encode()


# -- the model file ------------------------------------------------------------------------


def test_a_folder_with_one_module_is_laid_out_as_the_binary_format_spec_says():
    expected = (
        b"<roblox!"
        + bytes.fromhex("89ff0d0a1a0a")
        + bytes.fromhex("0000")  # magic, signature, version 0
        + struct.pack("<ii", 2, 2)
        + bytes(8)  # 2 classes, 2 instances, reserved
        # INST: class id, class name, object format 0, count, referents (delta, zigzag, interleaved)
        + chunk(
            b"INST",
            struct.pack("<I", 0)
            + string("Folder")
            + b"\x00"
            + struct.pack("<I", 1)
            + bytes.fromhex("00000000"),
        )
        + chunk(
            b"INST",
            struct.pack("<I", 1)
            + string("ModuleScript")
            + b"\x00"
            + struct.pack("<I", 1)
            + bytes.fromhex("00000002"),
        )
        # PROP: class id, property name, type id 0x01 (String), one length-prefixed string per instance
        + chunk(b"PROP", struct.pack("<I", 0) + string("Name") + b"\x01" + string("F"))
        + chunk(b"PROP", struct.pack("<I", 1) + string("Name") + b"\x01" + string("a"))
        + chunk(b"PROP", struct.pack("<I", 1) + string("Source") + b"\x01" + string("x"))
        # PRNT: version 0, count, children [0, 1] -> deltas [0, 1] -> zigzag [0, 2];
        # parents [-1, 0] -> deltas [-1, 1] -> zigzag [1, 2]; each interleaved big-endian
        + chunk(
            b"PRNT",
            b"\x00"
            + struct.pack("<I", 2)
            + bytes.fromhex("00 00 00 00 00 00 00 02")
            + bytes.fromhex("00 00 00 00 00 00 01 02"),
        )
        + chunk(b"END\x00", b"</roblox>")
    )
    assert folder_rbxm("F", {"a": "x"}) == expected


def test_an_empty_folder_matches_the_spec_byte_for_byte():
    expected = (
        b"<roblox!\x89\xff\r\n\x1a\n\x00\x00"
        + struct.pack("<ii", 1, 1)
        + bytes(8)
        + chunk(
            b"INST",
            struct.pack("<I", 0) + string("Folder") + b"\x00" + struct.pack("<I", 1) + bytes(4),
        )
        + chunk(b"PROP", struct.pack("<I", 0) + string("Name") + b"\x01" + string("Folder"))
        + chunk(b"PRNT", b"\x00" + struct.pack("<I", 1) + bytes(4) + bytes.fromhex("00000001"))
        + chunk(b"END\x00", b"</roblox>")
    )
    assert folder_rbxm("Folder", {}) == expected
    [folder] = read_rbxm(expected)
    assert (folder.class_name, folder.name, folder.parent) == ("Folder", "Folder", None)


def test_names_and_sources_round_trip_exactly():
    sources = {
        "solution": "local Solution = {}\nreturn Solution\n",
        "solution.spec": '-- ünïcødé ✓ 日本語 🚀\r\nlocal s = "\\0"\0\n\ttabs\n',
        "empty": "",
        "long": "local t = {\n" + "\t'x',\n" * 40_000 + "}\nreturn t\n",  # ~240 KiB
        "名前 with spaces": "return 1",
    }
    assert len(sources["long"].encode()) > 64 * 1024
    model = read_rbxm(folder_rbxm("LuauEval ✓", sources))
    assert [(i.class_name, i.name, i.parent) for i in model] == [
        ("Folder", "LuauEval ✓", None),
        *[("ModuleScript", name, 0) for name in sources],
    ]
    assert {i.name: i.properties["Source"] for i in model[1:]} == sources


def test_many_modules_keep_their_order_and_parent():
    modules = {f"m{i}": f"return {i}" for i in range(300)}  # referent deltas past one byte
    model = read_rbxm(folder_rbxm("F", modules))
    assert [i.name for i in model[1:]] == list(modules)
    assert {i.parent for i in model[1:]} == {0}


def test_the_reader_rejects_broken_files():
    good = folder_rbxm("F", {"a": "x"})
    for bad, problem in [
        (b"PK\x03\x04" + good[4:], "<roblox!"),
        (good[:-5], "cut short"),
        (good[:14] + b"\x01\x00" + good[16:], "version"),
        (good.replace(b"</roblox>", b"</roblax>"), "END"),
        (good + b"\x00", "after the END"),
    ]:
        with pytest.raises(RbxmError, match=problem):
            read_rbxm(bad)


def lz4_chunks(model: bytes) -> bytes:
    """`model` with every chunk LZ4-compressed, as Studio writes it (the writer stores them plain)."""
    out, at = bytearray(model[:32]), 32
    while at < len(model):
        name = model[at : at + 4]
        (length,) = struct.unpack_from("<I", model, at + 8)
        payload = model[at + 16 : at + 16 + length]
        block = lz4.block.compress(payload, store_size=False)
        out += name + struct.pack("<III", len(block), length, 0) + block
        at += 16 + length
    return bytes(out)


def test_the_reader_decodes_lz4_compressed_chunks():
    sources = {"solution": "return {}\n" * 500, "solution.spec": "-- ✓\n" + "local x = 1\n" * 300}
    plain = folder_rbxm("LuauEval", sources)
    packed = lz4_chunks(plain)
    assert len(packed) < len(plain) / 4
    assert read_rbxm(packed) == read_rbxm(plain)
    name_at = packed.index(b"PROP")
    (stored,) = struct.unpack_from("<I", packed, name_at + 4)
    broken = packed[: name_at + 16] + b"\xff" * stored + packed[name_at + 16 + stored :]
    with pytest.raises(RbxmError, match="LZ4 block does not decode"):
        read_rbxm(broken)
    bigger = (
        packed[: name_at + 8] + struct.pack("<I", 10_000) + packed[name_at + 12 :]
    )  # the header says more
    with pytest.raises(RbxmError, match="LZ4 block"):
        read_rbxm(bigger)


# -- the upload ----------------------------------------------------------------------------


# -- replies -------------------------------------------------------------------------------


def test_an_unreachable_server_raises_a_one_line_eval_error_naming_the_fix():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://user:{KEY}@127.0.0.1:{port}"
    started = time.perf_counter()
    with pytest.raises(EvalError) as caught:
        run_remote(DOUBLER, DOUBLER_SPEC, url=url, api_key=KEY)
    message = str(caught.value)
    assert f"http://127.0.0.1:{port}" in message
    assert "start JestLuaTestServer or drop --jest-url" in message
    assert "\n" not in message and KEY not in message
    assert time.perf_counter() - started < 3


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:1", "http://"])
def test_an_unusable_url_raises_without_retrying(url):
    # A retry would first wait the 60 s delay: well under it is no retry, on a loaded machine too.
    started = time.perf_counter()
    with pytest.raises(JestServerError, match="not a usable http"):
        run_remote(DOUBLER, DOUBLER_SPEC, url=url, api_key=KEY, retry_delay=60.0)
    assert time.perf_counter() - started < 20
