"""Can a judge share GPU memory with a launcher in its own user, pid, IPC and mount namespaces?

Tries two ways and prints what each gave:
- `vmm-fd`: `runner.ipc.shared_buffers` (cuMemCreate + a POSIX fd sent with SCM_RIGHTS), the runner's way;
- `legacy-ipc`: torch's `cudaIpcGetMemHandle` storage sharing, for comparison.

The launcher side writes 2*x into the shared output; the judge checks it after its own synchronise.
Run: `python bench/shared_memory_probe.py` on a GPU machine.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

UNSHARE = ["--user", "--map-root-user", "--net", "--pid", "--fork", "--mount", "--mount-proc", "--ipc", "--uts"]
N = 1 << 20


def child(mode: str, fd: int) -> None:
    import torch

    from runner.ipc.shared_buffers import SharedArena

    sock = socket.socket(fileno=fd)
    msg, fds, _, _ = socket.recv_fds(sock, 65536, 4)
    spec = json.loads(msg)
    start = time.perf_counter()
    if mode == "vmm-fd":
        arena = SharedArena.open(fds[0], spec["size"], "cuda")
        x = arena.view(0, (N,), torch.float32)
        y = arena.view(N * 4, (N,), torch.float32)
    else:
        args = [bytes.fromhex(a[1]) if isinstance(a, list) else a for a in spec["storage"]]
        storage = torch.UntypedStorage._new_shared_cuda(*args)
        both = torch.empty(0, dtype=torch.float32, device="cuda").set_(storage, 0, (2 * N,))
        x, y = both[:N], both[N:]
    opened = time.perf_counter() - start
    torch.mul(x, 2, out=y)
    torch.cuda.synchronize()
    sock.sendall(json.dumps({"ok": True, "open_s": opened}).encode())


def judge(mode: str) -> dict[str, object]:
    import torch

    from runner.ipc.shared_buffers import SharedArena

    ours, theirs = socket.socketpair()
    cmd = [sys.executable, "-I", __file__, "--child", mode, str(theirs.fileno())]
    if shutil.which("unshare"):
        cmd = ["unshare", *UNSHARE, *cmd]
    proc = subprocess.Popen(cmd, pass_fds=(theirs.fileno(),), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    theirs.close()
    if mode == "vmm-fd":
        arena = SharedArena.allocate(2 * N * 4, "cuda")
        x, y = arena.view(0, (N,), torch.float32), arena.view(N * 4, (N,), torch.float32)
        socket.send_fds(ours, [json.dumps({"size": arena.size}).encode()], [arena.fd])
    else:
        both = torch.empty(2 * N, dtype=torch.float32, device="cuda")
        x, y = both[:N], both[N:]
        args = [["bytes", a.hex()] if isinstance(a, bytes) else a for a in both.untyped_storage()._share_cuda_()]
        socket.send_fds(ours, [json.dumps({"storage": args}).encode()], [])
    x.copy_(torch.arange(N, device="cuda", dtype=torch.float32))
    y.fill_(float("nan"))
    torch.cuda.synchronize()
    reply = ours.recv(65536)
    out, _ = proc.communicate(timeout=120)
    torch.cuda.synchronize()
    ok = bool(reply) and torch.equal(y, 2 * x)
    return {
        "mode": mode,
        "shared_ok": ok,
        "reply": reply.decode() or None,
        "child_rc": proc.returncode,
        "child_output": out.decode(errors="replace")[-600:],
    }


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return
    import torch

    unshare = bool(shutil.which("unshare"))
    print("device:", torch.cuda.get_device_name(), "| torch", torch.__version__, "| unshare:", unshare)
    for mode in ("vmm-fd", "legacy-ipc"):
        try:
            print(json.dumps(judge(mode)))
        except Exception as exc:  # the probe reports, whatever happens
            print(json.dumps({"mode": mode, "shared_ok": False, "error": repr(exc)}))


if __name__ == "__main__":
    main()
