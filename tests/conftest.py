"""Shared fixtures: every test gets its own memory root under tmp_path and a git identity.

Git needs an author for commits; a fresh machine may have none, so the tests (like the
product itself, see ``memory/canon/gitrepo.py``) never rely on a global one.

Expensive things are made once per session and shared: one MCP server (``mcp_server``)
that the MCP tests talk to, each checking only what its own calls changed, one simulated
month (``lived_month``) and one kept demo (``kept_demo``) that tests read or copy rather
than recompute.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# Keep compiled modules for the suite even where the environment says not to
# (PYTHONDONTWRITEBYTECODE=1 is set on some machines, CI's among them): without them every
# pytest process rewrites every test module again (about 14 s of CPU a process instead of
# 6) and every `python -m evolving_agent` child compiles the package from source.  The
# caches are __pycache__ folders, which git ignores.  Set before the package is imported.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# A script that starts the suite in the background (`cmd &`) hands it SIGINT ignored, as
# POSIX shells do for asynchronous commands, and every process the suite starts would
# inherit that: the tests that press Ctrl-C on a real search, scheduler or server would
# see nothing happen.  Take Python's default back before any worker or child starts.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from tests.helpers.ramdisk import use_ram_for_temp_files  # noqa: E402

use_ram_for_temp_files()  # before pytest picks its base temp directory

import freezegun  # noqa: E402

# Each freeze_time walks every loaded module to swap its datetime references; the suite
# loads ~2,200 (openai alone 520), so a start cost ~50 ms.  The libraries below never
# read the clock for the product's dates; they are skipped, and their own calls (the
# HTTP clients' timeouts) keep the real time.
freezegun.configure(
    extend_ignore_list=[
        "openai", "ray", "mcp", "matplotlib", "numpy", "PIL", "requests", "urllib3",
        "rich", "pygments", "google", "grpc", "opentelemetry", "httpx", "httpx2",
        "httpcore", "httpcore2", "anyio", "starlette", "uvicorn", "jinja2",
        "cryptography", "grimp", "importlinter", "playwright", "detect_secrets",
    ]
)  # fmt: skip

from tests.helpers.fixtures import KeptDemo, LivedMonth, McpServer, isolated_env  # noqa: E402
from tests.helpers.ray_cluster import RAY_FILES, RayCluster, SharedCluster  # noqa: E402

if TYPE_CHECKING:
    from mcp import ClientSession


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in isolated_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("EVOLVING_AGENT_RAISE", raising=False)
    # Search tests check the harness's own guards against an unconfined agent (under
    # bwrap most of their attacks cannot even start), and their agents log outside
    # the workspace; the sandbox tests choose --sandbox bwrap explicitly.
    monkeypatch.setenv("EA_SANDBOX", "none")


# -- one MCP server for the session ---------------------------------------------------------


@pytest.fixture(scope="session")
def mcp_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    import sys

    from anyio.from_thread import start_blocking_portal
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from tests.helpers.roots import fresh_root

    tmp = tmp_path_factory.mktemp("mcp-server")
    env = {**os.environ, **isolated_env(tmp)}
    env.pop("EVOLVING_AGENT_RAISE", None)
    with pytest.MonkeyPatch.context() as mp:
        for name, value in isolated_env(tmp).items():
            mp.setenv(name, value)
        root = fresh_root(tmp / "memory")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "evolving_agent", "--root", str(root.path), "mcp"],
        env=env,
        cwd=str(tmp),
    )
    stderr_log = tmp / "server-stderr.log"

    @asynccontextmanager
    async def connected() -> AsyncIterator[ClientSession]:
        with stderr_log.open("a", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session

    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(connected()) as session:
            yield McpServer(root, stderr_log, portal, session)


# -- one lived month for the session ------------------------------------------------------------

MONTH_START = date(2026, 10, 1)


@pytest.fixture(scope="session")
def lived_month(tmp_path_factory: pytest.TempPathFactory) -> LivedMonth:
    from evolving_agent.jobs.simulate import simulate_month
    from tests.helpers.roots import fresh_root

    tmp = tmp_path_factory.mktemp("lived-month")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in isolated_env(tmp).items():
            mp.setenv(name, value)
        root = fresh_root(tmp / "memory")
        seen: list[str] = []
        result = simulate_month(
            root, MONTH_START, 31, progress=lambda _i, d, m: seen.append(f"{d} {m}")
        )
    return LivedMonth(root.path, result, seen)


# -- one Ray cluster for the Ray files (they run on one worker, one after another) --------


_RAY = SharedCluster()


@pytest.fixture
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> RayCluster:
    pytest.importorskip("ray")
    return _RAY.get(lambda: tmp_path_factory.mktemp("ray-scratch"))


@pytest.hookimpl(trylast=True)  # after pytest's own teardown of the test's fixtures
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the Ray cluster once this worker is past the Ray files (they run as one scope)."""
    if nextitem is None or nextitem.nodeid.split("::", 1)[0] not in RAY_FILES:
        _RAY.close()


# -- one kept demo for the session -----------------------------------------------------------


@pytest.fixture(scope="session")
def kept_demo(tmp_path_factory: pytest.TempPathFactory) -> KeptDemo:
    import subprocess
    import sys

    tmp = tmp_path_factory.mktemp("kept-demo")
    directory = tmp / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "evolving_agent", "demo", "--keep", str(directory)],
        env={**os.environ, **isolated_env(tmp), "NO_PROXY": "*", "HTTPS_PROXY": "http://0.0.0.0:9"},
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return KeptDemo(directory, proc.stdout)


def pytest_configure(config: pytest.Config) -> None:
    """Import every module of the package before any test freezes time.

    The CLI imports its modules lazily; a module first imported inside ``freeze_time``
    would bind freezegun's fake ``datetime`` into its pydantic models.  Users never
    import under a frozen clock, so the tests should not either.  Under xdist only the
    workers run tests; the controller skips this (about a second before any worker
    starts).
    """
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(CostliestFilesFirst(), "costliest-files-first")
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        return
    import importlib
    import pkgutil

    import evolving_agent

    for info in pkgutil.walk_packages(evolving_agent.__path__, "evolving_agent."):
        if info.name != "evolving_agent.__main__":
            importlib.import_module(info.name)


# -- the slow half ------------------------------------------------------------------------------

# Tests that take about a second or more on a 2-core machine: real searches, real servers,
# real concurrent processes, the demo, the README tour.  `pytest -m "not slow"` leaves them
# out; plain `pytest` (the README's command, and .ci/run) runs them all.  New tests mark
# themselves with @pytest.mark.slow; these older ones are listed by module (its path under
# tests/, without .py) so that edits to those files merge cleanly ("*": the whole module).
SLOW: dict[str, set[str]] = {
    "cli/test_cli": {
        "test_piping_into_head_is_not_an_unexpected_error",
    },
    "cli/test_review_cmds": {
        "test_a_real_terminal_gets_the_prompt",
        "test_approve_without_a_terminal_or_yes_refuses_instead_of_hanging",
        "test_concurrent_approvals_never_exceed_the_monthly_limit",
        "test_a_fourth_approval_for_one_month_is_refused_whenever_it_is_made",
        "test_monthly_canon_write_without_approval_is_denied_exit_3",
    },
    "cli/test_search_run_cmds": {
        "test_a_damaged_record_is_named_in_one_line",
        "test_a_log_from_a_newer_version_is_refused",
        "test_progress_lines_go_to_stderr",
        "test_resume_of_a_finished_run_does_nothing_more",
        "test_sigkill_then_resume_finishes_every_planned_turn_exactly_once",
    },
    "integrations/test_mcp_server": {"*"},
    "integrations/test_mcp_server_stdout": {"*"},
    "jobs/test_cronexpr": {
        "test_day_0_and_7_are_sunday_in_run_show_and_print_cron",
    },
    "jobs/test_markers": {"*"},
    "jobs/test_nightly": {
        "test_a_torn_tail_on_a_finished_day_does_not_block_its_nightly",
        "test_run_nightly_as_a_real_subprocess",
    },
    "jobs/test_scheduler": {
        "test_after_five_missed_nights_nightly_runs_once",
        "test_schedule_run_process_catches_up_and_stops_on_ctrl_c",
    },
    "memory/base/test_atomic": {
        "test_sigkill_at_every_step_of_a_write_leaves_the_old_or_the_new_file",
    },
    "memory/boot/test_boot": {
        "test_a_failing_write_file_never_costs_the_hook_its_stdout",
        "test_the_happy_path_runs_no_git_and_reads_no_history",
    },
    "memory/boot/test_bootfast": {"*"},
    "memory/evidence/test_evidence": {
        "test_friction_citing_an_unknown_hypothesis_is_refused_and_nothing_is_recorded",
        "test_8_processes_x_60_appends_lose_nothing_and_never_interleave",
    },
    "memory/ops/test_events": {
        "test_back_dated_import_counts_as_one_recorded_day",
        "test_evidence_import_of_a_non_utf8_line_names_file_and_line",
    },
    "memory/evidence/test_evidence_timezones": {"*"},
    "memory/ops/test_hypotheses_distinct_days": {"*"},
    "memory/canon/test_policy": {"*"},
    "memory/base/test_redact": {
        "test_a_pasted_key_and_injection_never_reach_tomorrows_context",
    },
    "memory/test_root": {
        "test_boot_markdown_json_and_claude_hook",
        "test_everything_in_the_root_is_private_whatever_the_umask",
        "test_jobs_and_the_scheduler_leave_nothing_readable_by_others_under_umask_0",
        "test_root_flag_naming_a_file_is_the_same_error_as_the_variable",
    },
    "reflectors/test_cli_presets": {
        "test_schedule_yaml_names_a_preset_and_it_is_guarded",
    },
    "reflectors/test_command": {"*"},
    "reflectors/test_fallback": {"*"},
    "review/test_approve": {"*"},
    "review/test_history": {
        "test_revert_of_an_approval_restores_canon_byte_for_byte",
        "test_history_runs_no_program_the_roots_git_config_names",
    },
    "review/test_provenance": {
        "test_a_planted_review_is_refused_by_approve_and_reported_by_verify",
    },
    "search/test_agents": {
        "test_claude_run_records_sessions_cost_and_tokens",
        "test_codex_resume_arguments_are_derived_or_refused",
        "test_codex_run_reads_thread_ids_and_prices_each_turn_once",
        "test_a_session_never_created_is_started_fresh",
        "test_an_overloaded_api_is_retried_with_backoff",
    },
    "search/test_budget": {
        "test_a_nan_or_negative_reported_cost_does_not_defeat_the_budget",
        "test_parallel_run_overshoots_by_at_most_one_turn",
        "test_reservations_at_the_mean_cost_hold_back_turns",
        "test_the_first_turn_runs_alone_until_a_cost_is_known",
        "test_token_budgets_and_earlier_rounds",
        "test_without_a_money_budget_everything_is_admitted",
    },
    "search/test_compare": {
        "test_writes_compare_json_and_md_and_reports_progress",
        "test_clearly_separated_policies_get_a_small_p_and_identical_ones_p_one",
        "test_table_is_mean_sd_and_improvement_over_references_when_maximising",
    },
    "search/test_compare_real": {"*"},
    "search/test_judge": {
        "test_timeout_kills_the_whole_process_group",
    },
    "search/test_judge_isolation": {"*"},
    "search/test_plateau": {"*"},
    "search/executors/test_ray_exec": {"*"},
    "search/test_report": {
        "test_missing_seed_is_reported_not_fatal",
        "test_best_candidate_diff_against_the_seed_commit",
        "test_cli_writes_png_markdown_html_and_prints_their_paths",
        "test_markdown_has_per_round_gains_empty_counts_and_forget_edit_sizes",
        "test_out_option_writes_elsewhere_and_leaves_run_dir_alone",
    },
    "search/test_report_real": {"*"},
    "search/test_rounds": {
        "test_a_moved_or_copied_run_directory_resumes_on_its_own_repository",
    },
    "search/test_runner": {
        "test_the_git_processes_of_a_turn_are_counted_and_few",
        "test_agent_timeout_is_recorded_and_the_run_goes_on",
        "test_agents_in_a_round_run_in_parallel",
        "test_budget_in_dollars_stops_the_run_early",
        "test_forget_team_run_on_the_bundled_example_writes_every_record",
        "test_noise_floor_comes_from_the_seed_scores_spread",
        "test_plateau_forget_fires_exactly_when_the_signal_says",
        "test_round_start_workspace_holds_only_the_best_candidate",
        "test_runs_without_any_git_identity",
        "test_sessions_are_fresh_per_round_and_continue_within",
        "test_within_noise_improvement_does_not_replace_the_best",
    },
    "search/test_runner_failures": {"*"},
    "test_demo": {
        "test_demo_keep_leaves_a_lived_month_with_its_review_pending",
        "test_demo_runs_offline_and_leaves_a_root_that_verify_accepts",
    },
    # Measured: 1.1 s of CPU or more each (the test's process and its children, on the
    # 2-core machine under load), 105 s of the fast part's 215 s between them.
    "cli/test_probe_cmds": {
        "test_diff_with_a_judge_command",
        "test_run_then_diff_then_review",
        "test_the_humans_three_answers_to_cards",
    },
    "examples/test_circles": {
        "test_generated_packings_are_judged_as_an_independent_check_judges_them",
        "test_moving_or_growing_one_circle_of_a_valid_packing_is_judged_exactly",
    },
    "suite/test_lives": {"test_lives_span_the_scripts_and_the_structures"},
    "jobs/test_six_weeks": {"*"},  # one simulated six weeks (module fixture), 2.8 s
    "jobs/test_words_invariants": {  # 20 generated lives, 21 s; each kept seed 0.7-1.5 s
        "test_the_invariants_hold_on_twenty_generated_lives",
        "test_a_counter_example_hypothesis_found_stays_fixed",
    },
    "memory/canon/test_gitrepo": {"test_trailers_written_by_commit_contents_read_back"},
    "memory/evidence/test_signing_chain": {"*"},  # a real ssh-agent and CLI processes each
    "memory/ops/test_hypotheses_turn": {
        "test_a_high_stakes_rule_never_turns",
        "test_a_turn_weakens_a_low_stakes_belief",
    },
    "memory/sync/test_check": {
        "test_a_bad_decision_on_the_remote_stops_the_sync_with_nothing_changed"
    },
    "memory/sync/test_run": {
        "test_a_signed_device_verifies_what_it_receives_against_its_own_chain",
        "test_a_decision_made_on_the_other_device_syncs_with_its_record",
    },
    "review/test_drift": {"test_drift_flags_the_planted_pendulums_of_20_generated_lives"},
    "review/test_pendulum": {
        "test_a_planted_pendulum_in_any_script_is_flagged_with_its_ids",
        "test_unrelated_beliefs_taking_turns_by_chance_are_no_pendulum",
    },
    "search/test_aftermath": {
        "test_plateau_and_the_runner_write_the_same_record",
        "test_the_reports_best_is_the_runs_tally",
    },
    "search/test_schedule": {"test_a_step_is_planned_alike_however_much_of_it_was_recorded"},
    # Real searches of 4 rounds and 8 turns (their assertions need the rounds), 1.2-2.9 s
    # each after the CLI one went in-process; the MCP test starts the only server of the
    # fast part, 1.3 s (fast branch, -n 0, the 2-core machine under load).
    "search/test_forecast": {
        "test_a_run_says_its_forecast_when_round_three_starts_and_the_report_keeps_it",
    },
    "search/test_holdout": {
        "test_resume_refuses_a_changed_holdout",
        "test_search_run_prints_the_alarm_at_its_end",
        "test_the_alarm_fires_on_a_lenient_scorer_and_the_agent_never_saw_the_holdout",
        "test_a_strict_holdout_gates_every_restart_seed",
        "test_the_alarm_stays_quiet_on_an_honest_scorer",
    },
    "search/test_notes": {
        "test_keep_notes_carries_the_notes_file_sessions_and_history_across_rounds",
        "test_forget_team_carries_no_notes_no_session_and_no_history",
    },
    "memory/base/test_bounds": {"test_an_mcp_friction_over_the_limit_is_the_same_tool_error"},
    # 1.2-2.6 s each in a fast run of this session (2 workers, a third process busy): a
    # real redo killed at each step, search runs whose assertions need several rounds,
    # a CLI process importing pydantic, a receipt of twenty probe entries.
    "cli/test__pydantic": {
        "test_a_command_validates_its_models_without_importing_importlib_metadata"
    },
    "jobs/test_redo": {
        "test_a_redo_killed_at_any_step_leaves_the_old_state_or_ends_in_the_new",
        "test_any_life_redone_is_the_life_run_once_with_the_later_edit",
    },
    "probes/test_receipt": {
        "test_a_model_that_drops_one_entry_among_twenty_is_caught_there_and_only_there",
        "test_one_misread_answer_does_not_make_an_entry_fall",
    },
    "search/test_arms": {
        "test_forget_team_is_measured_against_keep_notes_parallel_and_single",
        "test_a_null_result_still_prints_its_effect_and_p",
    },
    # 0.7-2.2 s each in a quiet fast run (-n 2) at this merge: real processes (lint-imports,
    # agents, a killed group), the openai client's first import, a source-wide AST scan.
    "test_records": {
        "test_a_record_is_built_shown_compared_and_hashed_as_a_dataclass",
        "test_no_dataclasses_function_is_called_on_a_record",
    },
    "test_architecture": {
        "test_a_bad_import_breaks_its_contract_and_is_named",
        "test_a_module_in_no_room_of_memory_breaks_the_rooms_contract",
        "test_every_child_process_goes_through_process_or_gitcmd",
    },
    "reflectors/test_probe_answerer": {
        "test_openai_sends_boot_as_the_system_prompt_in_plain_text",
    },
    "search/agents/test_circles_example": {
        "test_the_circles_agents_moves_pass_the_verifier_and_the_strict_holdout",
        "test_turns_improve_or_keep_the_packing_remember_the_session_and_write_notes",
    },
    "memory/boot/test_bootview": {
        "test_a_writers_timestamp_sorts_by_the_same_seconds_as_datetime_gives",
    },
    "test_process": {
        "test_timeout_kills_the_whole_group_and_says_so",
    },
    "search/test_certify_run": {
        "test_search_certify_refuses_what_is_no_run_and_too_few_canaries",
    },
    "integrations/test_openai_example": {
        "test_openai_loop_boots_chats_and_records_friction_as_session",
    },
    "memory/sync/test_plan": {
        "test_the_plan_merges_what_the_remote_brings_and_writes_nothing_on_disk",
    },
    "memory/sync/test_apply": {
        "test_apply_puts_the_merge_on_disk_and_clears_its_journal",
    },
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        # A file outside RAY_FILES would get the session's cluster on whichever worker
        # runs it, a second cluster beside the first: by its fixture closure, so a test
        # that reaches ray_cluster through another fixture is found too.
        if "ray_cluster" in getattr(item, "fixturenames", ()) and (
            item.nodeid.split("::", 1)[0] not in RAY_FILES
        ):
            raise pytest.UsageError(f"{item.nodeid} uses ray_cluster: add its file to RAY_FILES")
        names = SLOW.get(item.path.resolve().relative_to(here).with_suffix("").as_posix(), set())
        if "*" in names or getattr(item, "originalname", item.name) in names:
            item.add_marker(pytest.mark.slow)


# -- keeping both cores busy to the end ------------------------------------------------------

# xdist's --dist loadfile hands out whole files, by default the files with the most tests
# first: 800 one-line checks of instruction.py led, and a file of a few real-client
# searches could come last, one core idle while the other finished it.  The workers
# instead order the files by what they cost, the costliest first (so the last files
# handed out are the cheap ones), and pyproject's --no-loadscope-reorder keeps that
# order.  A test costs what it took the last time this checkout ran it (pytest's cache,
# written by the run's main process), else SLOW_SECONDS if it is slow and FAST_SECONDS if
# not: the means measured on the 2-core machine (~1,600 s over ~570 slow tests, ~110 s
# over ~2,500 fast ones).  Only the order changes, never which tests run.
FAST_SECONDS = 0.05
SLOW_SECONDS = 3.0
TOOK = "evolving-agent/test-seconds"
# What the longest tests take, for a checkout with no cache yet (a clean clone, CI): the
# first session's CI --durations where it gave them, else the slow part on the shared
# 2-core machine divided by 3.5 (its load: OpenCode's search took 240 s there, 68 s on CI).
# Few tests but long ones (the Ray cluster's three) would otherwise go out last.
SEED_SECONDS: dict[str, dict[str, float]] = {  # all of a test's parameters together
    "integrations/test_real_gemini_opencode": {
        "test_gemini_stopped_while_retrying_a_429_is_retried_like_the_429": 64,
        "test_opencode_search_edits_scores_resumes_forgets_and_counts_cost": 68,
    },
    "jobs/test_words_invariants": {"test_the_invariants_hold_on_two_hundred_generated_lives": 180},
    "search/test_attacks": {
        "test_forgery_is_held_in_every_mode": 62,
        "test_peeking_is_held_under_bwrap_and_said_without_it": 44,
    },
    "cli/test_views": {"test_a_view_on_a_terminal_obeys_no_control_text": 56},
    "memory/sync/test_run": {
        "test_the_soak_at_a_small_size_loses_nothing": 36,
        "test_sigkill_at_any_step_then_the_next_sync_completes": 34,
    },
    "search/executors/test_ray_exec": {
        "test_forget_on_the_bundled_example_scores_as_the_local_executor_does": 34,
        "test_turns_land_on_both_nodes_in_node_local_workspaces": 31,
        "test_a_killed_worker_is_a_transient_failure_retried_by_the_retry_policy": 19,
    },
    # The fast part's costliest, CPU seconds by the fast branch (-n 0, the 2-core machine
    # under load): a few dear tests in a short file would otherwise be counted 0.05 each.
    "test_architecture": {"test_a_bad_import_breaks_its_contract_and_is_named": 6.5, "test_every_child_process_goes_through_process_or_gitcmd": 1.5},  # noqa: E501
    "jobs/test_redo": {"test_a_redo_killed_at_any_step_leaves_the_old_state_or_ends_in_the_new": 5.0, "test_any_life_redone_is_the_life_run_once_with_the_later_edit": 1.0},  # noqa: E501
    "search/test_agents": {"test_an_overloaded_api_is_retried_with_backoff": 1.8, "test_a_session_never_created_is_started_fresh": 1.6, "test_a_task_starting_with_front_matter_is_not_an_option": 1.3, "test_a_rejected_flag_is_a_failed_turn_and_a_failed_run": 1.0},  # noqa: E501
    "reflectors/test_base": {"test_quota_and_self_description_rephrasings_are_refused": 1.9, "test_invalid_command_output_falls_back_to_rules": 1.5, "test_contract_nightly": 1.1},  # noqa: E501
    "examples/test_circles": {"test_every_hack_class_is_refused_with_its_reason": 2.3},
    "search/test_arms": {"test_forget_team_is_measured_against_keep_notes_parallel_and_single": 2.1},  # noqa: E501
    "search/agents/test_circles_example": {
        "test_the_circles_agents_moves_pass_the_verifier_and_the_strict_holdout": 1.6
    },
    "search/test_compare": {"test_writes_compare_json_and_md_and_reports_progress": 1.8},
    "memory/test_authority": {"test_denied_write_exits_3_changes_nothing_and_is_recorded": 1.1},
    "search/test_certify_run": {"test_search_certify_refuses_what_is_no_run_and_too_few_canaries": 1.0},  # noqa: E501
    "search/test_aftermath": {"test_the_reports_best_is_the_runs_tally": 1.0},
}  # fmt: skip


class CostliestFilesFirst:
    """Orders a worker's collection, after ``-m``/``-k`` have deselected what will not run."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        costliest_files_first(config, items)


def costliest_files_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    cache = getattr(config, "cache", None)
    took: dict[str, float] = (cache.get(TOOK, {}) if cache is not None else {}) or {}

    def seeded(item: pytest.Item) -> tuple[str, str]:
        module = item.nodeid.split("::", 1)[0].removeprefix("tests/").removesuffix(".py")
        return module, getattr(item, "originalname", item.name)

    params = Counter(seeded(item) for item in items)  # a seed is shared by its parameters

    def cost(item: pytest.Item) -> float:
        if item.nodeid in took:
            return float(took[item.nodeid])
        module, name = seeded(item)
        if name in SEED_SECONDS.get(module, {}):
            return SEED_SECONDS[module][name] / params[module, name]
        return SLOW_SECONDS if item.get_closest_marker("slow") else FAST_SECONDS

    per_file: dict[Path, float] = {}
    for item in items:
        per_file[item.path] = per_file.get(item.path, 0.0) + cost(item)
    order = {path: i for i, path in enumerate(per_file)}
    items.sort(key=lambda item: (-per_file[item.path], order[item.path]))  # stable in a file


# The files whose tests share nothing dearer than a scripted model server and a fresh root
# (their module fixture) or the session's kept demo: each of their tests is handed out on
# its own, so the real Gemini/OpenCode/Claude/Codex runs, the docs pages and the quarters
# of the 200 generated lives (minutes of one core each, as whole files) are shared by both
# workers.  The Ray files (RAY_FILES) go out as one, so one worker starts the session's
# cluster once for all of them.  Every other file stays whole.
SPLIT = {
    "tests/integrations/test_real_clients.py",
    "tests/integrations/test_real_gemini_opencode.py",
    "tests/jobs/test_words_invariants.py",
    "tests/test_docs.py",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesAndSplitFiles(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            if path in RAY_FILES:
                return "ray-cluster"  # one worker, one session cluster for them all
            return nodeid if path in SPLIT else path

    return FilesAndSplitFiles(config, log)


_took_now: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _took_now[report.nodeid] = _took_now.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    _RAY.close()  # a run stopped early (-x, Ctrl-C) has no last item to stop it after
    cache = getattr(session.config, "cache", None)
    if cache is None or hasattr(session.config, "workerinput") or not _took_now:
        return  # the main process writes (under xdist it sees every worker's reports)
    took = cache.get(TOOK, {}) or {}
    took.update({k: round(v, 3) for k, v in _took_now.items()})
    cache.set(TOOK, took)
