"""--energy: the power source measured while the items run, and each eval's share of what it
measured, for its result file.

Where requests are made (any process: the only one or each xdist worker), `EvalRun` records
the span of every candidate request in its run folder (`evals.energy.SpanLog`). The process
that writes the result files (the only one, or the xdist controller) samples the power source
for the whole session into `<run root>/energy/<source>-<session>.jsonl`, so a resumed run adds
its readings to the earlier sessions'. At the end each eval gets its share of the energy, by
the overlap of every run folder's spans with the readings (`evals.energy.attribute`): two runs
at once, in one command or in two, share what they overlap in proportion to their requests in
flight."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals import energy
from evals.errors import EvalError
from evals.run import EvalRun
from evals.scrub import printable

from .options import settings
from .state import is_worker, session_of


def configure(config: pytest.Config) -> None:
    """Step 3 of `plugins.session`'s configure."""
    if session_of(config).settings is None or is_worker(config) or not settings(config).energy:
        return
    s = settings(config)
    try:
        source = energy.chosen(config.getoption)  # as `plugins.options` checked it
        assert source is not None  # one is chosen whenever --energy is given
        source.check()  # before anything is asked: a source that cannot measure makes the kWh meaningless
    except EvalError as error:
        raise pytest.UsageError(printable(f"--energy: {error}")) from None
    config.pluginmanager.register(EnergyMeter(source, s.run_root, s.session), "energy-meter")


class EnergyMeter:
    def __init__(self, source: energy.PowerSource, run_root: Path, session: str):
        self.source = source
        self.run_root = run_root
        self.store = run_root / "energy" / f"{source.name}-{session}.jsonl"
        self._shares: dict[str, dict] | None = None  # every run's share, once the source is stopped

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.store.parent.mkdir(parents=True, exist_ok=True)
        self.source.start(self.store)

    @pytest.hookimpl(tryfirst=True)  # before the results collector asks for the figures
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.source.stop()

    def energy_of(self, run_folder: Path, bands: tuple[str, ...]) -> dict[str, Any] | None:
        """The run's kWh (and per band), over every session that measured it; None when none did."""
        shares = self._attribution().get(EvalRun.energy_label(run_folder))
        if not shares:
            return None
        # To the millijoule (kWh to 9 places): a short run on a quiet machine uses a few joules.
        figures: dict[str, Any] = {"kWh": round(shares["kWh"], 9)}
        if bands:
            figures["bands"] = {
                band: round(shares.get("bands", {}).get(band, 0.0), 9) for band in bands
            }
        return {**figures, "source": self.source.name, "method": self.source.method}

    def _attribution(self) -> dict[str, dict]:
        """Every run's share, worked out once per session (reading every run folder's spans and
        every store): the evals of one command ask in turn."""
        if self._shares is None:
            spans = [
                span
                for folder in self.run_root.glob("*/*/")
                if (folder / "energy").is_dir()
                for span in energy.SpanLog.read(folder)
            ]
            stores = sorted((self.run_root / "energy").glob(f"{self.source.name}-*.jsonl"))
            self._shares = energy.attribute(spans, self.source.intervals(stores))
        return self._shares
