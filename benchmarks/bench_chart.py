"""Draw the throughput-ratio bar chart with matplotlib (runs in the bench "plot" venv).

Reads a JSON spec on stdin: title, ylabel, groups, series {name: [values]}, lines, out.
"""

import json
import sys

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt


def main() -> None:
    spec = json.load(sys.stdin)
    groups = spec["groups"]
    series = spec["series"]
    width = 0.8 / max(len(series), 1)
    fig, ax = plt.subplots(figsize=(10, 5.2), dpi=110)
    for index, (name, values) in enumerate(series.items()):
        xs = [g + (index - (len(series) - 1) / 2) * width for g in range(len(groups))]
        bars = ax.bar(xs, values, width, label=name)
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=7, padding=2)
    for line in spec["lines"]:
        first, last = line["span"]
        left, right = first - 0.45, last + 0.45
        ax.hlines(line["y"], left, right, colors="grey", linestyles="--", linewidth=0.8)
        ax.annotate(
            line["label"],
            (right, line["y"]),
            fontsize=7,
            color="grey",
            ha="right",
            va="bottom",
        )
    ax.set_xticks(range(len(groups)), groups, fontsize=8)
    ax.set_ylabel(spec["ylabel"])
    ax.set_title(spec["title"], fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(spec["out"])


if __name__ == "__main__":
    main()
