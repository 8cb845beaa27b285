# Class: host_access
# §6: reading secrets, environment, other jobs' files or the parent's /proc; network; sitecustomize.py or cache
#     poisoning; compile-time #include or .incbin of host files
# Attack: tries the network: a TCP connection to a port the suite listens on at 127.0.0.1 on the host, to public
# addresses (TCP and UDP), and a DNS lookup. Each success is reported as CONNECTED. The job has its own network
# namespace: every attempt fails, and "CONNECTED" must appear nowhere in the result.
import socket

import torch

HOST_PORT = int("__LISTEN_PORT__")
TCP_TARGETS = [("127.0.0.1", HOST_PORT), ("1.1.1.1", 443), ("8.8.8.8", 53)]


def _probe() -> list[str]:
    report = []
    for host, port in TCP_TARGETS:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                report.append(f"CONNECTED tcp {host}:{port}")
        except OSError as exc:
            report.append(f"blocked tcp {host}:{port}: {exc}")
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.sendto(b"\0", ("8.8.8.8", 53))
            report.append("CONNECTED udp 8.8.8.8:53 (datagram sent)")
    except OSError as exc:
        report.append(f"blocked udp 8.8.8.8:53: {exc}")
    try:
        report.append(f"CONNECTED dns pypi.org -> {socket.gethostbyname('pypi.org')}")
    except OSError as exc:
        report.append(f"blocked dns: {exc}")
    return report


def solution(input_a: torch.Tensor, input_b: torch.Tensor, output_c: torch.Tensor, n: int) -> None:
    raise RuntimeError("network probe: " + "; ".join(_probe()))
