"""The headline of :mod:`.effects` in words and tables: the sentences quoted on each page and in the index,
and the page's compact table per reference. A sentence orders two methods only where the verdict does
(Holm's p <= alpha and stable when any one data set is dropped), always with its interval; every other
method is named as tied (no supported difference) or undetermined (a verdict one data set flips)."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["headline_sentences", "headline_tables", "headline_blocks", "DEFAULT_VIEW", "SENTENCE_PREFIXES"]

#: The view the sentences lead with: refused and skipped cells missing, every data set.
DEFAULT_VIEW = {"convention": "missing", "subset": "all"}


def _view(effects: pd.DataFrame, convention: str, subset: str, reference: str) -> pd.DataFrame:
    return effects[(effects["convention"] == convention) & (effects["subset"] == subset)
                   & (effects["reference"] == reference)].set_index("method")


def _effect(r) -> str:
    return (f"`{r.Index}` {r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] "
            f"({r.wins}/{r.losses} wins/losses of {r.n_sets} data sets, p_holm = {r.p_holm:.2g})")


def _count(n) -> str:
    return f"{int(n)} method" + ("" if int(n) == 1 else "s")


def _names(index) -> str:
    return ", ".join(f"`{m}`" for m in index)


#: What a data set's paired difference is a mean of, per unit (:func:`~.effects.headline_effects`).
UNIT_TEXT = {"cell": "the mean over its seeds and the cells both have of the difference in `{metric}`",
             "curve": "the mean over its seeds and the curves both have of the difference in the area under "
                      "the `{metric}` curve over log budget (divided by its range)"}


def _reference_sentence(view: pd.DataFrame, metric: str, alpha: float, best_text: str | None,
                        unit: str = "cell") -> str:
    name = view["reference_name"].iloc[0]
    against = f"the best, `{name}` ({best_text})" if best_text else f"`{name}`"
    text = (f"**Headline (`{metric}`) against {against}:** per data set, {UNIT_TEXT[unit].format(metric=metric)} "
            f"(refused and skipped cells missing, a measured failure scoring as one "
            f"cluster); two-sided Wilcoxon over the data sets, Holm over the {_count(view['p_wilcoxon'].notna().sum())} "
            f"compared with "
            f"`{name}` (alpha = {alpha}), each verdict checked by dropping each data set in turn.")
    for verdict, label in (("ahead", "Ahead of it"), ("behind", "Behind it")):
        rows = view[view["verdict"] == verdict].sort_values("mean_diff", ascending=verdict == "behind")
        if len(rows):
            text += f" {label}: " + "; ".join(_effect(r) for r in rows.itertuples()) + "."
    shaky = view[view["verdict"] == "undetermined"]
    if len(shaky):
        text += (" Undetermined (dropping one data set changes the verdict, or no data set in common): "
                 + "; ".join(f"`{r.Index}` no data set in common" if not r.n_sets else
                             f"`{r.Index}` {r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] "
                             f"(flips in {r.loo_flips} of {r.loo_n} drops)" for r in shaky.itertuples()) + ".")
    tied = view[view["verdict"] == "tied"]
    if len(tied):
        text += f" Tied with it (no supported difference): {_names(tied.index)}."
    return text


def _changes(effects: pd.DataFrame, other: dict) -> list[str]:
    """Verdicts that differ between the default view and ``other`` (``{"convention": .., "subset": ..}``);
    where the best differs there, no method-by-method change (another reference): its verdicts instead."""
    out = []
    for reference in ("kmeans", "best"):
        base = _view(effects, reference=reference, **DEFAULT_VIEW)
        alt = _view(effects, reference=reference, **other)
        if base.empty or alt.empty:
            continue
        names = (base["reference_name"].iloc[0], alt["reference_name"].iloc[0])
        if names[0] != names[1]:
            verdicts = [f"{v}: {_names(alt.index[alt['verdict'] == v])}" for v in ("ahead", "behind", "undetermined")
                        if (alt["verdict"] == v).any()]
            out.append(f"the best there is `{names[1]}`, not `{names[0]}`; against it, "
                       + ("; ".join(verdicts) if verdicts else "every method is tied") + " (every other method tied)")
            continue
        both = base.index.intersection(alt.index)
        moved = [f"`{m}` {base.at[m, 'verdict']} -> {alt.at[m, 'verdict']}" for m in both
                 if base.at[m, "verdict"] != alt.at[m, "verdict"]]
        if moved:
            out.append(f"against `{names[0]}`: " + ", ".join(moved))
    return out


def _size_class_sentence(effects: pd.DataFrame, metric: str, classes: list, alpha: float) -> str:
    """Per size class: its data sets, its best, and who is ahead of / behind each reference there; a
    method with no data set of the class measured is named as not measured in it, not ranked. A class
    with too few data sets for any verdict says so: the smallest two-sided Wilcoxon p over N data sets is
    2 / 2^N, and Holm's first step needs p <= alpha / m over a family of m methods."""
    parts = []
    for label in classes:
        view = effects[(effects["convention"] == "missing") & (effects["subset"] == label)]
        if view.empty:
            continue
        n_sets = int(view["n_sets"].max())
        text = f"{label} ({n_sets} data set{'s' if n_sets != 1 else ''})"
        family = int(view[view["reference"] == "kmeans"]["p_wilcoxon"].notna().sum())
        if family and 2.0 / 2.0 ** n_sets > alpha / family:
            parts.append(text + f": too few data sets for any verdict (the smallest two-sided Wilcoxon p over "
                                f"{n_sets} data sets is {2.0 / 2.0 ** n_sets:.2g}; Holm over {family} methods "
                                f"needs {alpha / family:.2g}); its differences are in the table below")
            continue
        for reference in ("kmeans", "best"):
            ref = view[view["reference"] == reference].set_index("method")
            if ref.empty:
                continue
            name = ref["reference_name"].iloc[0]
            who = f"`{name}`" + (" (the best)" if reference == "best" else "")
            said = [f"{'ahead of' if v == 'ahead' else 'behind'} {who}: {_names(ref.index[ref['verdict'] == v])}"
                    for v in ("ahead", "behind") if (ref["verdict"] == v).any()]
            text += "; " + ("; ".join(said) if said else f"nobody ahead of or behind {who}")
        unmeasured = view.loc[view["n_sets"] == 0, "method"].unique()
        if len(unmeasured):
            text += f"; not measured in this class (refused or skipped on every data set): {_names(unmeasured)}"
        parts.append(text)
    return (f"**Per size class (`{metric}`, data sets by n; each class its own Holm family):** "
            + ". ".join(parts) + ".")


def headline_sentences(effects: pd.DataFrame, p_best: pd.DataFrame, flags: pd.DataFrame, metric: str, alpha: float,
                       margin: float, n_boot: int, unit: str = "cell") -> list[str]:
    """The headline's sentences (markdown): one per reference under the default view, P(best), what the
    ``last`` convention changes, the flagged data sets and what leaving them out changes, and the size
    classes where the data sets fall in more than one. ``unit``: what a data set's difference is a mean of
    (:data:`UNIT_TEXT`)."""
    if effects.empty:
        return [f"**Headline (`{metric}`):** no method pair has a data set in common: no effect is measured."]
    pb = p_best[(p_best["convention"] == "missing") & (p_best["subset"] == "all")].set_index("method")
    eligible = pb["p_best"].dropna()
    out = []
    for reference in ("kmeans", "best"):
        view = _view(effects, reference=reference, **DEFAULT_VIEW)
        if view.empty:
            continue
        best_text = None
        if reference == "best":
            name = view["reference_name"].iloc[0]
            best_text = (f"highest mean `{metric}` over the {int(pb.at[name, 'n_sets'])} data sets, "
                         f"{pb.at[name, 'mean']:.3f}, among the {len(eligible)} methods with a value on every one")
        out.append(_reference_sentence(view, metric, alpha, best_text, unit))
    if len(eligible):
        top = eligible[eligible >= 0.05].sort_values(ascending=False)
        missing = pb.index[pb["p_best"].isna()]
        out.append(f"**P(best) (`{metric}`):** in {n_boot} bootstrap resamples of the data sets, the highest mean is "
                   + ", ".join(f"`{m}`'s in {p:.0%}" for m, p in top.items())
                   + (" of the resamples" if len(top) else "nobody's in 5 % or more")
                   + f" (every other method: under 5 %), among the {len(eligible)} methods with a value on every "
                     f"data set" + (f"; not drawn (missing some data sets: refused or skipped there): "
                                    f"{_names(missing)}" if len(missing) else "") + f". The ROPE of P(ahead/rope/behind) is {margin:g}.")
    last = _changes(effects, {"convention": "last", "subset": "all"})
    out.append(f"**Refusals and skipped draws as failures (`{metric}`, convention `last`):** "
               + ("; ".join(last) + "." if last else "no verdict changes."))
    if len(flags):
        listed = "; ".join(f"`{r.dataset}` ({r.flag}: {r.why})" for r in flags.itertuples())
        kept = _changes(effects, {"convention": "missing", "subset": "informative"})
        out.append(f"**Flagged data sets (`{metric}`):** {listed}. Without them: "
                   + ("; ".join(kept) + "." if kept else "no verdict changes."))
    classes = [c for c in pd.unique(effects["subset"]) if c not in ("all", "informative")]
    if classes:
        out.append(_size_class_sentence(effects, metric, classes, alpha))
    return out


def _cell(r) -> tuple:
    if not np.isfinite(r.mean_diff):
        return ("",) * 7
    return (r.n_sets, f"{r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]", f"{r.wins}/{r.losses}",
            f"{r.p_holm:.2g}", f"{r.p_ahead:.2f}/{r.p_rope:.2f}/{r.p_behind:.2f}", r.verdict,
            f"{r.loo_flips}/{r.loo_n}")


def headline_tables(effects: pd.DataFrame, metric: str) -> list[tuple[str, pd.DataFrame]]:
    """Per reference, a compact table (index methods) under the default view: data sets, mean
    difference [95 % interval], wins/losses, p_holm, P(ahead/rope/behind), verdict, leave-one-out flips;
    beside it the ``last`` convention's and the no-flagged-sets' difference and verdict where any
    differs. Returns ``[(caption, table)]``."""
    out = []
    columns = ["sets", "mean diff [95% CI]", "w/l", "p_holm", "P(ahead/rope/behind)", "verdict", "LOO flips"]
    for reference in ("kmeans", "best"):
        base = _view(effects, reference=reference, **DEFAULT_VIEW)
        if base.empty:
            continue
        table = pd.DataFrame([_cell(r) for r in base.itertuples()], index=base.index, columns=columns)
        for label, other in (("failures last", {"convention": "last", "subset": "all"}),
                             ("without flagged sets", {"convention": "missing", "subset": "informative"})):
            alt = _view(effects, reference=reference, **other).reindex(base.index)
            if alt["verdict"].isna().all():
                continue
            text = [f"{a.mean_diff:+.3f}, {a.verdict}" if isinstance(a.verdict, str) else "" for a in alt.itertuples()]
            differs = (alt["verdict"] != base["verdict"]) | ~np.isclose(alt["mean_diff"], base["mean_diff"])
            differs |= alt["reference_name"] != base["reference_name"]
            if differs.any():
                alt_name = alt["reference_name"].dropna().iloc[0]
                if alt_name != base["reference_name"].iloc[0]:  # another best there: say against whom
                    label += f" (against `{alt_name}`)"
                table[label] = np.where(differs, text, "same")
        name = base["reference_name"].iloc[0]
        caption = (f"`{metric}`, each method minus `{name}`" + (" (the best)" if reference == "best" else "")
                   + ", over data sets (refused and skipped cells missing):")
        order = base["verdict"].map({"ahead": 0, "tied": 1, "undetermined": 2, "behind": 3})
        table = table.iloc[np.lexsort((-base["mean_diff"].fillna(-np.inf).to_numpy(), order.to_numpy()))]
        out.append((caption, table.rename_axis("method")))
    return out


#: How each headline sentence starts: :func:`~.claims.index_summary` quotes these into the index.
SENTENCE_PREFIXES = ("**Headline (", "**P(best) (", "**Refusals and skipped draws as failures (",
                     "**Flagged data sets (", "**Per size class (")


def size_class_table(effects: pd.DataFrame) -> pd.DataFrame:
    """Methods x size classes: the difference from ``kmeans`` [95 % interval] and the verdict in each class
    (default convention); ``not measured`` where the class has none of the method's cells. Empty without
    size classes."""
    view = effects[(effects["convention"] == "missing") & (effects["reference"] == "kmeans")
                   & ~effects["subset"].isin(["all", "informative"])]
    if view.empty:
        return pd.DataFrame()
    text = [f"{r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] {r.verdict} ({r.n_sets})" if r.n_sets
            else "not measured" for r in view.itertuples()]
    table = view.assign(text=text).pivot(index="method", columns="subset", values="text")
    return table[list(pd.unique(view["subset"]))].fillna("")


def per_budget_table(view: pd.DataFrame | None) -> pd.DataFrame:
    """Methods x (setting,) budget: the difference from ``kmeans`` [95 % interval] at each budget (the
    curve's points beside its area). Empty without a per-budget view."""
    if view is None or view.empty:
        return pd.DataFrame()
    several = view["setting"].nunique() > 1
    column = [f"{s} {b:g}" if several else f"{b:g}" for s, b in zip(view["setting"], view["budget"])]
    text = [f"{r.mean_diff:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]" for r in view.itertuples()]
    table = view.assign(column=column, text=text).pivot(index="method", columns="column", values="text")
    order = view.sort_values(["setting", "budget"])
    return table[[c for c in pd.unique(pd.Series(column, index=view.index)[order.index])]].fillna("")


def headline_blocks(results: dict, alpha: float, margin: float, n_boot: int, md_frame) -> list:
    """The page's headline section: its definitions, then per metric (``results``: {metric:
    :func:`~.effects.headline_effects` result}, the page's metric first) the sentences and the compact
    tables. ``md_frame`` renders a table as the page's markdown."""
    metrics = list(results)
    curves = any(r.get("unit") == "curve" for r in results.values())
    unit = ("the curves both methods have (a curve: one data set, setting, noise and seed followed over its "
            "budgets; its score: the trapezoid area under the cell scores over log budget, divided by the "
            "log budget range, so its mean height with each doubling of the supervision weighed alike; a "
            "method missing any budget of a curve misses the curve)"
            if curves else "the cells both methods have")
    blocks = [("h", 2, "Headline: paired effect sizes over data sets"),
              ("md", "Each method against two references: plain `kmeans`, and the kind's best (the highest mean "
                     "over the data sets among the methods with a value on every one). The **data sets are the "
                     f"units**: per data set, the mean over its base seeds of the mean over {unit} of their "
                     "difference (a cell score is the mean over its trials; a measured failure, a timeout, "
                     "error or infeasible trial, scores as the one-cluster partition, 0 in ARI and NMI). "
                     "`mean diff`: the mean over "
                     f"the data sets (positive: the method is ahead), with a 95 % percentile bootstrap interval "
                     f"({n_boot} resamples of the data sets and, within each, of its seeds: the seed-to-seed "
                     f"spread is part of the interval); `w/l`: data sets where it is ahead / behind; "
                     f"`p_holm`: two-sided Wilcoxon signed-rank over the data sets, Holm-adjusted over the family "
                     f"of every method compared with that reference (per metric, convention and set of data "
                     f"sets); `P(ahead/rope/behind)`: the Bayesian signed-rank posterior (baycomp) with a region "
                     f"of practical equivalence of {margin:g}. `verdict`: ahead or behind where p_holm <= {alpha}, "
                     f"else tied; **undetermined** where dropping any one data set (Holm recomputed) changes it "
                     f"(`LOO flips`: the drops that change it, of the data sets). Failure conventions: refused "
                     f"(a time or memory model's *prediction*) and skipped trials are no measurement, so their "
                     f"cells are missing (the default); `failures last` scores them as failures, shown where a "
                     f"verdict or difference changes. Flagged data sets (no method recovers the classes, or "
                     f"saturated) are listed; `without flagged sets` repeats the comparison without them. "
                     + (f"`{metrics[0]}` is on every point, which credits copying the supervision; "
                        + ", ".join(f"`{m}`" for m in metrics[1:]) + " (the points in no constraint) is shown "
                        "beside it. " if len(metrics) > 1 else "")
                     + "The average ranks and the CD diagram (section 1) are the secondary view.")]
    for metric, result in results.items():
        if len(metrics) > 1:
            blocks.append(("h", 3, f"`{metric}`"))
        blocks += [("md", s) for s in result["text"]]
        for caption, table in headline_tables(result["effects"], metric):
            blocks += [("md", caption), ("md", md_frame(table))]
        budgets = per_budget_table(result.get("per_budget"))
        if not budgets.empty:
            blocks += [("md", f"`{metric}` at each budget, each method minus `kmeans` over the data sets with "
                              f"that budget (the points of the curves whose areas are compared above; "
                              f"refused and skipped cells missing):"), ("md", md_frame(budgets))]
        classes = size_class_table(result["effects"])
        if not classes.empty:
            blocks += [("md", f"`{metric}` per size class, each method minus `kmeans` [95 % interval], the "
                              f"verdict and (the data sets); `not measured`: refused or skipped on every data "
                              f"set of the class, not ranked there:"), ("md", md_frame(classes))]
    return blocks
