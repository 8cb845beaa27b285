"""A contest's targets against the GPU registry and the runners: an unknown GPU type is refused with the known ones
(and a close name), an old spelling points to its key, a GPU type only a runner serves is accepted, and a known GPU
type that no runner serves gives a warning, not a refusal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.contests import ContestView, GpuCatalog, unserved_gpu_types, unserved_warning
from core.contests.targets import check_targets
from core.errors import ContestError, InvalidOptionError
from core.store.contests import Contest, Target
from runner.gpus import GPU_MODELS

REGISTRY = GpuCatalog.of(GPU_MODELS)
START = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)


def contest_on(*targets: Target) -> ContestView:
    contest = Contest(
        id=1, slug="cup", title="Cup", starts_at=START, ends_at=START + timedelta(hours=1), visibility="public",
        scoring="rank_sum", created_by=1, created_at=START - timedelta(days=1), cancelled_at=None, frozen_at=None,
        rated_at=None, ranked_burst=None, ranked_per_hour=None,
    )  # fmt: skip
    return ContestView(contest, [], list(targets))


def test_the_registry_keys_are_the_known_gpu_types_and_each_target_comes_back_as_stored():
    assert {"h100", "h200", "cpu"} <= set(REGISTRY.known())
    checked = check_targets((("h100", "float32"), ("h200", "float16")), REGISTRY)
    assert checked == [Target("h100", "float32"), Target("h200", "float16")]


def test_an_unknown_gpu_type_is_refused_naming_the_known_ones_and_the_closest():
    with pytest.raises(InvalidOptionError) as refused:
        check_targets((("h1000", "float32"),), REGISTRY)
    message = str(refused.value)
    assert message.startswith("`h1000` is not a GPU type the arena knows; choose among ")
    assert all(f"`{key}`" in message for key in ("cpu", "h100", "h200"))
    assert "Did you mean `h100`" in message


def test_a_name_close_to_nothing_gets_no_suggestion():
    with pytest.raises(InvalidOptionError) as refused:
        check_targets((("zzzzzz", "float32"),), REGISTRY)
    assert "Did you mean" not in str(refused.value)


def test_an_old_spelling_is_refused_pointing_to_its_key():
    # Runs are judged and ranked under the key, so a contest on the old spelling would never have an entry.
    alias = next(label for m in GPU_MODELS for label in m.labels() if label != m.key)
    key = next(m.key for m in GPU_MODELS if alias in m.labels())
    with pytest.raises(InvalidOptionError, match=f"`{alias}` is an old spelling of the GPU type `{key}`"):
        check_targets(((alias, "float32"),), REGISTRY)


def test_a_gpu_type_a_runner_serves_is_known_even_without_a_registry_entry():
    catalog = GpuCatalog.of(GPU_MODELS, served=["rtx-6000-ada"])
    assert check_targets((("rtx-6000-ada", "float32"),), catalog) == [Target("rtx-6000-ada", "float32")]
    assert "rtx-6000-ada" in catalog.known()


@pytest.mark.parametrize(
    ("targets", "error", "message"),
    [
        ((), ContestError, "at least one"),
        ((("H100", "float32"),), InvalidOptionError, "is not a GPU type name"),
        ((("h100", "int8"),), InvalidOptionError, "`int8` is not a dtype; choose one of float32"),
        ((("h100", "float32"), ("h100", "float32")), ContestError, "listed twice"),
    ],
)
def test_the_other_target_checks_still_hold(targets, error, message):
    with pytest.raises(error, match=message):
        check_targets(targets, REGISTRY)


def test_a_known_gpu_type_without_a_runner_is_warned_about_and_a_served_one_is_not():
    catalog = GpuCatalog.of(GPU_MODELS, served=["cpu", "h100"])
    cup = contest_on(Target("h100", "float32"), Target("h200", "float32"), Target("h200", "float16"))
    assert unserved_gpu_types(cup.targets, catalog) == ["h200"]
    warning = unserved_warning(cup, catalog)
    assert warning is not None
    assert warning.startswith("No runner serves `h200`: nobody can enter `cup` there until one does.")
    assert "Runners serve `cpu`, `h100`" in warning
    assert unserved_warning(contest_on(Target("h100", "float32")), catalog) is None


def test_a_caller_that_does_not_know_its_runners_warns_about_nothing():
    assert unserved_warning(contest_on(Target("h200", "float32")), REGISTRY) is None
