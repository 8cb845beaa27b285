"""The multi-rank harness on the CPU: N processes over gloo, each rank timed with its own clock, every rank's
outputs verified, each sample scored by its slowest rank (docs/distributed.md).

`harness` is the judge's side (inputs, expected outputs, verdicts); `rank` is the side that loads the submission,
one process per rank, and imports nothing of `harness`. `exchange` is what they share: the files between them.
"""
