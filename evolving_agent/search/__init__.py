"""The forgetting search loop: coding agents take scored turns in rounds, then forget.

``config`` (a run's settings) and ``presets`` (policies) feed ``runner``, which plays
turns (``turn``) on worktrees (``workspace``) of a round's repository (``rounds``),
scores them with the sealed ``judge`` and lets ``reducer`` decide (pure: who sees what,
when a round ends, ``budget`` reservations).  ``rundir`` is the run directory (records,
seal, summary).  ``agents/`` and ``executors/`` are the backends, by name through
``names``.  After a run: ``report`` / ``report_render`` (plots, Markdown, HTML),
``compare`` / ``compare_plot`` / ``stats`` (policies side by side) and ``plateau``
(continue vs fresh sessions); ``text`` formats numbers and tables for all of them.
The search imports nothing of the memory side.
"""
