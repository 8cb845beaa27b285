"""What the solution printed, after the result: in Discord a code block, or its start and `output.txt` when long;
in the CLI the same text under the result. Within Discord's limits, with no way out of the code block."""

from __future__ import annotations

from arena.render import render_result as render_cli
from bot.ui.embeds import SubmissionHeader
from bot.ui.output import OUTPUT_FIELD, OUTPUT_FILE
from bot.ui.results import result_message
from contract import wire
from contract.wire import OUTPUT_KEEP_BYTES, ErrorInfo, PhaseOutput, SubmissionResult
from core.views.output import output_text
from tests.bot.test_embeds import assert_fits

HEADER = SubmissionHeader(
    submission_id=7, slug="vector_add", user_name="ada", file_name="v.py", language="python", dtype="float32",
    mode="test", gpu_type="cpu",
)  # fmt: skip


def _result(output: list[PhaseOutput], **fields: object) -> SubmissionResult:
    values: dict[str, object] = dict(
        submission_id="7", problem_slug="vector_add", problem_version=1, dtype="float32", language="python",
        mode="test", status="passed", device="cpu",
        tests=[wire.TestOutcome(index=0, name="n=7", dims=[7], passed=True, message="passed")],
    )  # fmt: skip
    values.update(fields)
    values["output"] = output
    return SubmissionResult.model_validate(values)


def _field(message_embed: object) -> str | None:
    fields = message_embed.to_dict().get("fields", [])  # type: ignore[attr-defined]
    found = [f["value"] for f in fields if f["name"] == OUTPUT_FIELD]
    return found[0] if found else None


def test_a_short_output_is_a_code_block_in_the_embed() -> None:
    result = _result([PhaseOutput(phase="test", stdout="n=7 ok\n", stderr="careful\n")])
    message = result_message(HEADER, result, None)
    value = _field(message.embed)
    assert value is not None and value.startswith("```\n") and value.endswith("\n```")
    assert "--- stdout during the correctness tests ---\nn=7 ok" in value
    assert "--- stderr during the correctness tests ---\ncareful" in value
    assert OUTPUT_FILE not in message.file_names()
    assert_fits(message.embed)


def test_a_long_output_is_attached_whole_and_its_cut_bytes_are_said() -> None:
    output = [
        PhaseOutput(phase=phase, stdout="y" * OUTPUT_KEEP_BYTES, stdout_cut_bytes=1_040_384)
        for phase in ("load", "test", "benchmark")
    ]
    result = _result(output, status="failed", error=ErrorInfo(code="wrong_answer", message="Wrong answer on n=7"))
    message = result_message(HEADER, result, None)
    value = _field(message.embed)
    assert value is not None and "attached as output.txt" in value
    attached = dict(message.files)[OUTPUT_FILE].decode("utf-8")
    assert attached == output_text(output)
    assert attached.count("… 1,040,384 more bytes cut") == 3
    assert attached.count("y" * OUTPUT_KEEP_BYTES) == 3
    assert_fits(message.embed)


def test_printed_fences_and_mentions_stay_inside_the_block() -> None:
    result = _result([PhaseOutput(phase="test", stdout="```\n@everyone\x1b[2J\n```")])
    value = _field(result_message(HEADER, result, None).embed)
    assert value is not None
    assert value.count("```") == 2, value
    assert "@everyone" not in value and "\x1b" not in value


def test_a_quiet_solution_has_no_output_field_or_file() -> None:
    message = result_message(HEADER, _result([]), None)
    assert _field(message.embed) is None and OUTPUT_FILE not in message.file_names()


def test_the_cli_shows_the_same_text_after_the_result() -> None:
    output = [PhaseOutput(phase="benchmark", stdout="timed\n", stdout_cut_bytes=12)]
    result = _result(output, notes=["The solution printed during its timed calls."])
    text = render_cli(result)
    assert text.endswith("what the solution printed:\n" + output_text(output))
    assert "--- stdout during the timed runs ---\ntimed\n… 12 more bytes cut" in text
    assert text.index("notes for reviewers") < text.index("what the solution printed")
