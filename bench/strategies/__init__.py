"""Strategies for measuring the verdict on ``arena synth --model walk`` days: files loaded by
path (``arena backtest bench/strategies/random_taker.py LOG``), not baselines."""
