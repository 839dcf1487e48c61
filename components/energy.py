"""Per-question energy: measured from the CPU's energy counters where the machine exposes them,
estimated from CPU time where it does not. Every reading says which.

* **Measured** (``method="measured"``): Linux exposes Intel's and AMD's RAPL counters under
  ``/sys/class/powercap/intel-rapl:N/energy_uj`` (one per CPU package, in microjoules, wrapping
  at ``max_energy_range_uj``). A reading is the packages' energy between two marks. It counts
  everything the packages did in that time, other processes too: on a busy machine it is an
  upper bound for this process's share.
* **Estimated** (``method="estimated"``): this process's CPU time (user + system, every thread:
  llama.cpp's threads are in it) times a power figure per busy core. The default,
  :data:`DEFAULT_WATTS_PER_CORE`, is an AMD EPYC 7763's thermal design power over its cores
  (280 W / 64 = 4.4 W): the processor family of the machines this project is measured on (their
  ``/proc/cpuinfo`` says "AMD EPYC", Zen 3). It leaves out memory, storage and idle power, so it
  is an estimate of the processor's share, for comparing policies with each other, not a wall-plug
  figure. Set ``$ADAPTIVE_RAG_WATTS_PER_CORE`` (or pass ``watts_per_core``) for another processor.

Readings from concurrent questions overlap (process CPU time and package counters are shared);
the service answers one question per model at a time, so its figures are per question.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

DEFAULT_WATTS_PER_CORE = 280.0 / 64
"""Watts per busy core for the estimate: an AMD EPYC 7763's TDP (280 W) over its 64 cores."""

RAPL_ROOT = Path("/sys/class/powercap")
METHODS = ("measured", "estimated")


def _watts_from_env() -> float:
    raw = os.environ.get("ADAPTIVE_RAG_WATTS_PER_CORE")
    if raw is None:
        return DEFAULT_WATTS_PER_CORE
    try:
        value = float(raw)
    except ValueError as exc:
        raise ValueError(f"ADAPTIVE_RAG_WATTS_PER_CORE must be a number of watts, got {raw!r}") from exc
    if not value > 0:
        raise ValueError(f"ADAPTIVE_RAG_WATTS_PER_CORE must be positive, got {raw!r}")
    return value


@dataclass(frozen=True)
class RaplZone:
    """One package's energy counter."""

    energy: Path
    max_range_uj: int

    def read(self) -> int:
        return int(self.energy.read_text().strip())


def rapl_zones(root: Path = RAPL_ROOT) -> list[RaplZone]:
    """The readable package-level RAPL counters (``intel-rapl:N``, not their sub-zones); empty when
    the machine exposes none or they are not readable (recent kernels make them root-only)."""
    zones = []
    for folder in sorted(root.glob("intel-rapl:*")) if root.is_dir() else []:
        if folder.name.count(":") != 1:  # intel-rapl:0:0 (core, uncore, dram) is inside intel-rapl:0
            continue
        try:
            energy = folder / "energy_uj"
            max_range = int((folder / "max_energy_range_uj").read_text().strip())
            zone = RaplZone(energy, max_range)
            zone.read()
        except (OSError, ValueError):
            continue
        zones.append(zone)
    return zones


class EnergyMeter:
    """Marks a moment (:meth:`mark`) and gives the energy spent since a mark (:meth:`since`).

    Marks are plain JSON data, so a graph's state can carry one from its first node to its last."""

    def __init__(self, watts_per_core: float | None = None, rapl_root: Path = RAPL_ROOT):
        self.watts_per_core = _watts_from_env() if watts_per_core is None else float(watts_per_core)
        if not self.watts_per_core > 0:
            raise ValueError(f"watts_per_core must be positive, got {watts_per_core}")
        self._zones = rapl_zones(rapl_root)

    @property
    def method(self) -> str:
        return "measured" if self._zones else "estimated"

    def warm_up(self) -> None:
        """Nothing to load: the counters are found at construction."""

    @staticmethod
    def _cpu_s() -> float:
        t = os.times()
        return t.user + t.system

    def mark(self) -> dict[str, Any]:
        mark: dict[str, Any] = {"cpu_s": self._cpu_s(), "wall_s": time.perf_counter()}
        if self._zones:
            try:
                mark["rapl_uj"] = [zone.read() for zone in self._zones]
            except OSError:  # a counter that stopped being readable: estimate this question instead
                pass
        return mark

    def since(self, mark: Mapping[str, Any]) -> dict[str, Any]:
        """The energy since ``mark``: joules, how they were obtained, the CPU seconds and wall seconds."""
        cpu_s = max(self._cpu_s() - float(mark["cpu_s"]), 0.0)
        wall_s = max(time.perf_counter() - float(mark["wall_s"]), 0.0)
        reading: dict[str, Any] = {"cpu_s": cpu_s, "wall_s": wall_s}
        before = mark.get("rapl_uj")
        if before is not None and len(before) == len(self._zones):
            try:
                now = [zone.read() for zone in self._zones]
            except OSError:
                now = None
            if now is not None:
                total = sum((b - a) % (zone.max_range_uj + 1) if zone.max_range_uj else b - a
                            for zone, a, b in zip(self._zones, before, now, strict=True))
                return {**reading, "joules": total / 1e6, "method": "measured", "source": "RAPL package counters"}
        return {**reading, "joules": cpu_s * self.watts_per_core, "method": "estimated",
                "source": f"process CPU time x {self.watts_per_core:.2f} W per busy core"}
