"""Timing of one test case: stopping criteria, timers, and the measurement loop."""

from runner.timing.measurement import Measurement, measure_case

__all__ = ["Measurement", "measure_case"]
