"""A run command's options as one run config: new, or read back (``--config``) and changed.

Why this module exists: ``arena backtest`` and ``arena paper`` take the same way from their
options to the one :class:`~arena_tui.run.config.RunConfig` their runner takes whole. Each
command declares once which option sets which field (a :data:`Fields` map: parameter name
-> field name and value); :func:`run_config` makes the config of a new run from it, or,
with ``--config``, reads the config a run kept and replaces only the fields whose options
were given on the command line (an option left out keeps the config's value, not the
option's default). A run's own config names no ``--out``: it is repeated into the
directory holding it (refused there unless ``--force``, as any ``--out`` holding a run).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import typer
from typer._click.core import Parameter, ParameterSource
from typer._click.exceptions import MissingParameter
from typer.core import _TyperParameter

from arena_tui.run.config import ConfigError, RunConfig, config_dir, read_config

Fields = Mapping[str, tuple[str, Any]]  # option's parameter name -> (config field, value)

# the options arena backtest and arena paper share (util.options declares them): parameter
# name -> config field (a path option's value is kept as text)
RUN_OPTIONS = {
    "season": "season",
    "vs": "vs",
    "out": "out",
    "force": "force",
    "latency_ms": "latency_ms",
    "seed": "seed",
    "hook_timeout": "hook_timeout_s",
    "epoch": "epoch",
    "twins": "twins",
}


def run_fields(ctx: typer.Context) -> dict[str, tuple[str, Any]]:
    """The fields the shared options set (:data:`RUN_OPTIONS`), from ``ctx``'s values."""
    values = ctx.params
    return {
        name: (field, text(v) if isinstance(v := values[name], Path) else v)
        for name, field in RUN_OPTIONS.items()
    }


def given(ctx: typer.Context, name: str) -> bool:
    """Whether the option of parameter ``name`` was given (on the command line)."""
    return ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)


def text(path: Path | None) -> str | None:
    """A path as a config keeps it: as given."""
    return None if path is None else str(path)


def run_config(
    ctx: typer.Context,
    config_file: Path | None,
    fields: Fields,
    new: Mapping[str, Any],
    *,
    kinds: Iterable[str],
    not_with_config: Iterable[str] = (),
) -> RunConfig:
    """The run's config: ``new`` (the fields that say what runs) with every field of
    ``fields``; or, with ``config_file``, the config read from it with the fields of the
    options given replaced. A config of another ``kinds`` of run, or an option of
    ``not_with_config`` given beside it (STRATEGY, LOG...), is one line."""
    if config_file is None:
        return RunConfig(**new, **dict(fields.values()))
    extra = [name for name in not_with_config if given(ctx, name)]
    if extra:
        shown = ", ".join(_shown(ctx, name) for name in extra)
        raise ConfigError(f"--config {config_file} names what runs: no {shown} with it")
    config = read_config(config_file)
    if config.kind == "lockstep" and config.lockstep_part().command is None:
        raise ConfigError(
            f"--config {config_file}: a run of arena host --lockstep, whose agents were "
            "started by hand: it cannot be repeated from its config alone"
        )
    if config.kind not in kinds:
        raise ConfigError(
            f"--config {config_file}: a run of arena {_command(config)}: repeat it with "
            f"arena {_command(config)} --config"
        )
    if config.out is None:  # a run's own config: repeated into its directory (--out: else)
        config = config.replace(out=str(config_dir(config_file)))
    return config.replace(**dict(v for name, v in fields.items() if given(ctx, name)))


def _shown(ctx: typer.Context, name: str) -> str:
    """How the option or argument ``name`` is written on the command line."""
    param = _param(ctx, name)
    long = [o for o in param.opts if o.startswith("--")]
    return long[0] if long else (param.metavar or name.upper())


def missing(ctx: typer.Context, name: str) -> MissingParameter:
    """The error click gives for a required argument left out (``Missing argument ...``),
    for one that is required only without ``--config``."""
    param = _param(ctx, name)
    assert isinstance(param, _TyperParameter)
    return MissingParameter(ctx=ctx, param=param)


def _param(ctx: typer.Context, name: str) -> Parameter:
    return next(p for p in ctx.command.params if p.name == name)


def _command(config: RunConfig) -> str:
    """The command that repeats a run of ``config``."""
    return "paper" if config.kind == "paper" else "backtest"
