"""The plugins in plugins/ are loaded by their `pytest11` entry point (see pyproject.toml),
before the command line is parsed, so that `--provider reference -n 8` parses the same in
the controller and in every xdist worker. Here: what pytest should not collect."""

collect_ignore = ["data", "bench", "site", "docs"]
