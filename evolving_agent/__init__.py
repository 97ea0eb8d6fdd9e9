"""evolving-agent: a self that grows slowly and safely, and a forgetting search loop."""

__version__ = "0.1.0"
