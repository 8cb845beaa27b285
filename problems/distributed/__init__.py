"""Problems that run on several GPUs at once: one process per rank, each with its own inputs, scored by the slowest
rank (docs/distributed.md).

`DistributedProblem` is a sibling of `problems.base.Problem`, not a subclass: the single-GPU registry, the judge and
every front end keep seeing only single-GPU problems, and the distributed ones are listed by
`problems.distributed.registry`.
"""
