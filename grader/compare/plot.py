"""`grader compare --plot`: the comparison's figures as a picture, when matplotlib is installed."""

import importlib.util

from grader.compare.view import LESSON, labels
from grader.paths import KIT_ROOT


def no_matplotlib() -> str:
    """What to say when --plot was asked for without matplotlib: the figures above are all there is, and how to get the plot."""
    where = (
        f"run pip install -e '.[plot]' in the kit's folder ({KIT_ROOT}), with the kit's environment active,"
        if (KIT_ROOT / "pyproject.toml").is_file()
        else "run pip install matplotlib"
    )
    return f"No plot was drawn: --plot needs matplotlib, which is not installed. To get it, {where} then run this command again."


def can_plot() -> bool:
    """True when matplotlib can be imported."""
    return importlib.util.find_spec("matplotlib") is not None


def draw(path, result: dict, models: dict) -> None:
    """Loss curves, the figures beside the lesson's, and the head's attention map, in one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (losses, bars, look) = plt.subplots(
        1, 3, figsize=(16, 4.5), gridspec_kw={"width_ratios": [3, 2, 4]}
    )
    first = len(models["mlp"]["losses"])  # the attention models go on from the trained MLP
    for name, event in models.items():
        start = 1 if name == "mlp" else first + 1
        losses.plot(
            range(start, start + len(event["losses"])),
            event["losses"],
            label=labels(result)[name],
            linewidth=0.8,
        )
    losses.set(yscale="log", xlabel="step", ylabel="training loss", title="Training loss")
    losses.legend()
    kit_and_lesson(bars, result["models"])
    picture = models.get("attention", {}).get("attention_map")
    if picture:
        text, shares = picture["text"][-64:], picture["shares"][-64:]
        look.bar(range(len(shares)), shares, color="tab:orange")
        look.set_xticks(range(len(text)), list(text), fontsize=7, family="monospace")
        look.set(ylabel="share", title="Where the head looks before writing the decision")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def kit_and_lesson(bars, figures: dict) -> None:
    """Each figure of each model beside the lesson's: a model's name under its pair of bars, the figure's under its group."""
    names = [n for n in figures if n in LESSON]
    groups = [
        (
            "p(right decision)",
            [figures[n]["p_decision"] for n in names],
            [LESSON[n][0] for n in names],
        ),
        (
            "correct replies / 100",
            [figures[n]["correct_replies"] / figures[n]["sampled_replies"] for n in names],
            [LESSON[n][1] / 100 for n in names],
        ),
    ]
    ticks = []
    for offset, (label, kit, lesson) in enumerate(groups):
        xs = [offset * (len(names) + 1) + i for i in range(len(names))]
        bars.bar(
            [x - 0.2 for x in xs],
            kit,
            width=0.4,
            label="kit" if offset == 0 else None,
            color="tab:blue",
        )
        bars.bar(
            [x + 0.2 for x in xs],
            lesson,
            width=0.4,
            label="lesson" if offset == 0 else None,
            color="tab:gray",
        )
        ticks += [(x, "MLP" if name == "mlp" else "attention") for x, name in zip(xs, names)]
        bars.text(
            sum(xs) / len(xs),
            -0.09,
            label,
            transform=bars.get_xaxis_transform(),
            ha="center",
            va="top",
            fontsize=9,
        )
    bars.set_xticks([x for x, _ in ticks], [text for _, text in ticks], fontsize=8)
    bars.set(ylim=(0, 1.2), yticks=[0, 0.2, 0.4, 0.6, 0.8, 1.0], title="Kit and lesson")
    bars.legend(loc="upper center", ncol=2)
