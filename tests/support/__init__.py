"""What the harness's tests and benches share, imported as `tests.support.<module>` (the
project's root is on the path of its environment, so `bench/` needs no `sys.path` edit):

- `loopback/`: loopback servers speaking the OpenAI, Anthropic and Hub wire protocols, with
  injectable faults and Batch APIs; `ServerProcess` runs one in a child process.
- `harness`: the CLI harness, `pytest` and `evaluate` run as a user runs them, in a child
  process or in this one; the Student responder and the bundled questions.
- `board`: a published world (a model evaluated and published into a data folder), built once
  per session and copied where a test writes.
- `runs`: run specs answered offline by the reference provider, to build runs from.
- `tiny_model`: a tiny checkpoint and LoRA adapter made on the spot, never downloaded.
- `luau/`: the Jest-Lua test specs, a loopback Jest server and an rbxm reader.
- `browser`: headless Chromium through Selenium.
- `answer_tables`, `adversarial_replies`: replies with what a careful reader takes from them.
- `power`: power sources' fixtures (a fake meter, HWiNFO logs).
- pytest plugins loaded with `-p`: `no_network`, `echo_provider`, `internal_error`.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
