"""The slow clocks: jobs that read Evidence and write Today, proposals and the review queue.

``nightly`` (one day -> bias and carry), ``weekly`` (a week -> proposals) and ``monthly``
(proposals -> at most a few reviews), each planned with ``markers`` (one record set per
date, under a lock) and run by name through ``dispatch``.  ``scheduler`` runs them on
``schedule.yaml``'s cron lines (``cronexpr`` reads cron as cron means it, ``cronprint``
writes crontab and systemd units), ``settings`` is that file's model, ``prompts`` the
model prompts in ``crons/``, and ``simulate`` lives a month for the demo and the tests.
"""
