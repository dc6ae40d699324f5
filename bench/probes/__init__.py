"""pytest plugins the benchmarks load into the runs they time, with `-p bench.probes.<name>`
(importable from the project's root, which the editable install puts on the path). Not named
`plugins`: a script run as `python bench/<name>.py` has bench/ first on its path, where that
name would hide the harness's own `plugins`."""
