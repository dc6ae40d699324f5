"""The harness's benchmarks: each `bench/<name>.py` is a script run as `uv run python
bench/<name>.py` (bench/README.md lists them and their latest figures).

What the scripts share is imported as `bench._common`; the pytest plugins they load into the
runs they time are in `bench.probes` (`-p bench.probes.<name>`); what they share with the
tests is `tests.support`. The project's root is on the environment's path (the editable
install), so none of them edits `sys.path`. `bench/smoke.py` runs every script with `--smoke`.
"""
