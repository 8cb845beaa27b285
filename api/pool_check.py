"""Whether a runner's hardware belongs in its pool, by the GPU registry (`runner/gpus.py`), and its sandbox is
strong enough for the fleet.

The check maps each GPU's *name* to the registry's entry itself, rather than trusting the key the runner sent: a
PCIe card is `h100-pcie`, not `h100`, and an H200 is `h200`, so neither joins an `h100` pool. A runner whose sandbox
is weaker than the fleet requires (`ARENA_FLEET_REQUIRED_SANDBOX`, `full` by default) joins no pool: a submission
that runs there could reach the network or the host's files.
"""

from __future__ import annotations

from contract.names import SANDBOX_LEVELS
from contract.wire import RunnerHardware
from runner.gpus import CPU, canonical_gpu_type, gpu_type_for


def pool_mismatch(pool: str, hardware: RunnerHardware, required_sandbox: str = "full") -> str | None:
    """Why `hardware` may not serve the pool `pool` (a GPU type), or None when it may."""
    if SANDBOX_LEVELS.index(hardware.sandbox) < SANDBOX_LEVELS.index(required_sandbox):
        return (
            f"its sandbox is `{hardware.sandbox}`, and this fleet requires `{required_sandbox}` "
            '(docs/runner.md, "The sandbox", says what the host needs)'
        )
    wanted = canonical_gpu_type(pool)
    if hardware.device == "cpu":
        if wanted == CPU.key:
            return None
        return f"it has no GPU, and the pool is `{pool}`"
    if not hardware.gpus:
        return "it reports a GPU device but no GPU"
    if wanted == CPU.key:
        return "it serves GPUs, and the pool is `cpu`"
    found = {gpu.name: gpu_type_for(gpu.name) for gpu in hardware.gpus}
    wrong = sorted(f"{name} (`{key}`)" for name, key in found.items() if key != wanted)
    if wrong:
        return f"its GPUs are {', '.join(wrong)}, and the pool is `{wanted}`"
    return None
