"""One frozen run config: what every runner takes whole, and what a run directory keeps.

Why this module exists: ``arena backtest``, ``arena paper``, a lockstep run, a sweep's jobs
and arena-tui all say the same things about a run (the season, the sources, the entrants
and their parameters, latency, seed, the hook timeout, the run log's form, the cache, the
outputs). One struct says them once; every command maps its options to it and hands it
over, and the runner writes it into the run directory (``config.json``) so the run can be
repeated from it alone (``arena backtest --config DIR/config.json``).

Paths are kept as the user gave them (text), so a config read back names the same files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from arena_tui.logs.meta import INFO_URL, WS_URL
from arena_tui.util.errors import ArenaError

CONFIG_FILE = "config.json"
DEFAULT_HOOK_TIMEOUT_S = 10.0  # seconds one hook call may run (<= 0: no limit)
DEFAULT_TWINS = 100  # run.twins.TWINS (not imported: the runner will import this module)


class ConfigError(ArenaError):
    """A run config that cannot be read or does not describe a run."""


class LiveConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a run on the live feed adds (``arena paper``)."""

    coins: tuple[str, ...] = ()  # with a season file: () = all its markets
    hours: float = 24.0  # the default season's length
    ws_url: str = WS_URL
    info_url: str = INFO_URL
    meta: str | None = None  # a saved meta answer instead of asking info_url

    def replace(self, **changes: object) -> LiveConfig:
        return msgspec.structs.replace(self, **changes)


class LockstepConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a lockstep run adds: agents over the season's HTTP API, stepped in turn."""

    names: tuple[str, ...] = ("agent",)  # the agents' entry names
    command: str | None = None  # the agent to launch (``arena backtest --agent``)
    think: Literal["zero", "measured"] = "zero"
    step_timeout_s: float = 30.0
    connect_timeout_s: float = 30.0
    host: str = "127.0.0.1"
    port: int = 0
    body_max: int = 4096
    generator: str = "arena backtest --agent"  # what the run log says made it

    def replace(self, **changes: object) -> LockstepConfig:
        return msgspec.structs.replace(self, **changes)


class RunConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One run, whole. ``kind`` says which runner takes it."""

    kind: Literal["backtest", "paper", "lockstep"] = "backtest"
    strategy: str | None = None  # the strategy file (None: lockstep agents only)
    params: tuple[str, ...] = ()  # the strategy's --param NAME=VALUE texts
    vs: str | None = None  # "baselines" and/or strategy files, comma-separated
    logs: tuple[str, ...] = ()  # the recorded sources, in time order
    season: str | None = None  # a season file (None: the logs' own, or a default)
    latency_ms: int = 0
    seed: int = 0
    hook_timeout_s: float = DEFAULT_HOOK_TIMEOUT_S
    run_log: Literal["thin", "full"] = "thin"
    cache: bool = True  # read and write the day cache
    out: str | None = None  # the run's directory (None: a new one in the data dir)
    force: bool = False  # replace a run already in ``out``
    live: LiveConfig | None = None
    lockstep: LockstepConfig | None = None
    epoch: str = "auto"  # the verdict's block length (``auto``: chosen for the run)
    twins: int = DEFAULT_TWINS  # random twins for the skill answer (0: none)

    @property
    def full_log(self) -> bool:
        return self.run_log == "full"

    def strategy_path(self) -> Path:
        if self.strategy is None:
            raise ConfigError("this run config names no strategy")
        return Path(self.strategy)

    def season_path(self) -> Path | None:
        return None if self.season is None else Path(self.season)

    def out_path(self) -> Path | None:
        return None if self.out is None else Path(self.out)

    def live_part(self) -> LiveConfig:
        """The live feed's settings (the defaults when the config names none)."""
        return self.live if self.live is not None else LiveConfig()

    def lockstep_part(self) -> LockstepConfig:
        """The lockstep settings (the defaults when the config names none)."""
        return self.lockstep if self.lockstep is not None else LockstepConfig()

    def replace(self, **changes: object) -> RunConfig:
        """This config with ``changes`` (field names) made: a new frozen config."""
        return msgspec.structs.replace(self, **changes)

    def kept(self) -> RunConfig:
        """The config a run keeps (``config.json``): what decides its results, and nothing
        of where or how it was written (its directory is the one holding the file; never
        ``force``; the day cache at its default, which changes no result), so two runs of
        one config keep the same bytes, and ``--config`` repeating it into the directory
        holding it is refused as a second run there is (unless ``--force`` is given)."""
        return self.replace(out=None, force=False, cache=True)


_ENCODER = msgspec.json.Encoder(order="deterministic")
_DECODER = msgspec.json.Decoder(RunConfig)


def encode_config(config: RunConfig) -> bytes:
    """The config as written into a run directory: indented JSON, keys in a fixed order."""
    return msgspec.json.format(_ENCODER.encode(config), indent=2) + b"\n"


def write_config(config: RunConfig, run_dir: Path) -> Path:
    """Write ``config`` into ``run_dir`` (``config.json``) as given (a run writes its
    :meth:`RunConfig.kept`); its path."""
    path = run_dir / CONFIG_FILE
    path.write_bytes(encode_config(config))
    return path


def config_dir(path: Path) -> Path:
    """The directory of the config at ``path`` (a ``config.json``, or its directory)."""
    return path if path.is_dir() else path.parent


def read_config(path: Path) -> RunConfig:
    """A run config from ``path`` (a file, or a run directory holding ``config.json``);
    one line if it cannot be read or is not a run config."""
    if path.is_dir():
        path = path / CONFIG_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{path}: not a run config: {exc}") from None
