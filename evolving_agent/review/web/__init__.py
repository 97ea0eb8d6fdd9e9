"""The owner's review page (``evolving-agent review serve``; needs the ``[review]`` extra).

``app``    the Starlette app: the guard (Host, token, Origin, CSRF), pages and decisions
``cards``  one review card: diff re-validated now, evidence for and against, hold, reverse
``svg``    the month's pictures, rendered on the server
``text``   root text made visible (control, bidi, zero-width characters)
``serve``  binds 127.0.0.1, prints the one address, serves until Ctrl-C

The data it shows comes from :mod:`evolving_agent.review.glance` and
:mod:`evolving_agent.review.drift`, which need no web stack.
"""
