"""A bar chart as a PNG without matplotlib: bars and reference lines, no text.

Used when the bench "plot" environment (matplotlib) is absent, as in smoke mode.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

COLORS = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189))
COLOR_NAMES = ("blue", "orange", "green", "red", "purple")


def _png(width: int, height: int, pixels: list[bytearray]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + bytes(row) for row in pixels)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def bar_chart(
    spec: dict[str, Any], path: Path, width: int = 800, height: int = 400
) -> None:
    """Grouped bars of spec["series"] over spec["groups"], lines at spec["lines"]."""
    pixels = [bytearray(b"\xff" * (width * 3)) for _ in range(height)]

    def fill(x0: int, y0: int, x1: int, y1: int, color: tuple[int, int, int]) -> None:
        for y in range(max(0, y0), min(height, y1)):
            row = pixels[y]
            for x in range(max(0, x0), min(width, x1)):
                row[3 * x : 3 * x + 3] = bytes(color)

    series = list(spec["series"].values())
    groups = len(spec["groups"])
    top = max(
        [
            1.0,
            *(v for values in series for v in values),
            *(line["y"] for line in spec["lines"]),
        ]
    )
    margin, base = 40, height - 30
    scale = (base - 20) / (top * 1.1)
    group_width = (width - 2 * margin) / max(groups, 1)
    bar = group_width * 0.8 / max(len(series), 1)
    for g in range(groups):
        for s, values in enumerate(series):
            x0 = int(margin + g * group_width + group_width * 0.1 + s * bar)
            fill(
                x0,
                int(base - values[g] * scale),
                int(x0 + bar) - 1,
                base,
                COLORS[s % len(COLORS)],
            )
    fill(margin, base, width - margin, base + 2, (0, 0, 0))
    for line in spec["lines"]:
        y = int(base - line["y"] * scale)
        first, last = line.get("span", (0, groups - 1))
        left = int(margin + first * group_width)
        right = int(margin + (last + 1) * group_width)
        for x in range(left, right, 8):
            fill(x, y, x + 4, y + 1, (120, 120, 120))
    path.write_bytes(_png(width, height, pixels))
