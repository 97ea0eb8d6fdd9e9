"""Tests of the suite's own machinery (tests/helpers/): the generators and fixtures other
tests rely on.  tests/helpers/ holds importable helpers only; a test of a helper lives here,
named after it, as a test of a product module lives beside that module's package."""
