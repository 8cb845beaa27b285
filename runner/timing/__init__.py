"""Timing of one test case: the timing methods (methods/), stopping criteria, and the measurement loop."""

from runner.timing.measurement import Measurement, measure_case

__all__ = ["Measurement", "measure_case"]
